extension UserRecord {
    /// The USER fields (their JSON names) that differ from `earlier`: `user.updated`'s
    /// `detail.fields`, names only, never the values.
    public func changedFields(from earlier: UserRecord) -> [String] {
        var fields: [String] = []
        if appleSub != earlier.appleSub { fields.append("apple_sub") }
        if email != earlier.email { fields.append("email") }
        if emailVerified != earlier.emailVerified { fields.append("email_verified") }
        if isPrivateEmail != earlier.isPrivateEmail { fields.append("is_private_email") }
        if emailForwarding != earlier.emailForwarding { fields.append("email_forwarding") }
        if realUserStatus != earlier.realUserStatus { fields.append("real_user_status") }
        if givenName != earlier.givenName || familyName != earlier.familyName { fields.append("name") }
        if appleCredential != earlier.appleCredential { fields.append("apple_credential") }
        if externalID != earlier.externalID { fields.append("external_id") }
        if hasPassword != earlier.hasPassword { fields.append("sign_in_methods") }
        if locale != earlier.locale { fields.append("locale") }
        return fields
    }
}
