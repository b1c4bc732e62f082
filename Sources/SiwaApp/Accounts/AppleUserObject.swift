import JSON
import Store

/// Apple's one-time `user` object (`{"name":{"firstName","lastName"},"email"}`), as a native
/// app forwards it or Apple posts it in the web flow's form (APPLE.md §1.2). Read in one place,
/// so both flows keep the same fields and the same size caps.
enum AppleUserObject {
    static func profile(from object: JSONObject) -> ClientProfile {
        let name = object["name"]?.object
        return ClientProfile(
            givenName: name?["firstName"]?.string.map { StoredText.cut($0) },
            familyName: name?["lastName"]?.string.map { StoredText.cut($0) },
            email: object["email"]?.string.map { StoredText.cut($0) })
    }
}
