import Testing
@testable import Passwords

@Suite struct PasswordHashTests {
    @Test func aHashIsWrittenAndReadAsAPHCString() throws {
        let hash = PasswordHash(parameters: .current, salt: Array(0..<16), hash: Array(100..<132))
        let text = hash.description
        #expect(text == "$scrypt$ln=15,r=8,p=1$AAECAwQFBgcICQoLDA0ODw$ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoM")
        #expect(PasswordHash(text) == hash)
    }

    @Test func somethingElseIsNotAHash() {
        let salt = "AAECAwQFBgcICQoLDA0ODw", output = "ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoM"
        for text in [
            "", "plain text", "$argon2id$v=19$m=512,t=3,p=2$\(salt)$\(output)",
            "$scrypt$ln=15,r=8$\(salt)$\(output)",                 // p missing
            "$scrypt$ln=15,r=8,p=1,p=1$\(salt)$\(output)",         // p twice
            "$scrypt$ln=15,r=8,p=1,x=1$\(salt)$\(output)",         // unknown parameter
            "$scrypt$ln=015,r=8,p=1$\(salt)$\(output)",            // a second spelling of 15
            "$scrypt$ln=+15,r=8,p=1$\(salt)$\(output)",
            "$scrypt$ln=40,r=8,p=1$\(salt)$\(output)",             // N out of range
            "$scrypt$ln=22,r=8,p=1$\(salt)$\(output)",             // 4 GiB of memory to verify
            "$scrypt$ln=15,r=8,p=1$\(salt)==$\(output)",           // padding
            "$scrypt$ln=15,r=8,p=1$\(salt)$\(output.replacingOccurrences(of: "+", with: "-"))",  // url alphabet
            "$scrypt$ln=15,r=8,p=1$$\(output)",                    // no salt
            "$scrypt$ln=15,r=8,p=1$\(salt)$\(output)$",
        ] {
            #expect(PasswordHash(text) == nil, "\(text)")
        }
    }
}

@Suite struct PasswordPolicyTests {
    @Test func lengthIsCountedInBytesOfUTF8() {
        #expect(PasswordPolicy.weakness(of: "short pw", email: "ada@example.com") != nil)
        #expect(PasswordPolicy.weakness(of: "bright kite", email: "ada@example.com") == nil)
        // Five two-byte letters make ten bytes.
        #expect(PasswordPolicy.weakness(of: "ééééé", email: "x@example.com") == nil)
        #expect(PasswordPolicy.weakness(of: String(repeating: "a", count: 256) + "b", email: "x@example.com") != nil)
        #expect(PasswordPolicy.weakness(of: String(repeating: "ab", count: 128), email: "x@example.com") == nil)
    }

    @Test func theCommonPasswordsAreRefusedWhateverTheirCase() {
        #expect(CommonPasswords.all.count == 10_000)
        #expect(CommonPasswords.all.contains("password"))
        #expect(CommonPasswords.all.contains(#"pic\'s"#))
        #expect(PasswordPolicy.weakness(of: "qwertyuiop", email: "x@example.com") == "the password is one of the 10,000 most common passwords")
        #expect(PasswordPolicy.weakness(of: "BasketBall", email: "x@example.com") != nil)
        #expect(PasswordPolicy.weakness(of: "basketball and more", email: "x@example.com") == nil)
    }

    /// The list is Sources/CCommonPasswords/common-passwords.txt, compiled in by #embed: every
    /// line of it arrives whole, the first, one in the middle and the last included, and
    /// nothing else does (no empty entry from the final newline, no line break in an entry).
    @Test func theEmbeddedListHasEveryLineFromFirstToLast() {
        #expect(CommonPasswords.all.count == 10_000)
        for entry in ["password", "rrrrr", "eyphed"] {  // lines 1, 5,001 and 10,000
            #expect(CommonPasswords.contains(entry), "\(entry)")
            #expect(CommonPasswords.contains(entry.uppercased()), "\(entry)")
        }
        #expect(!CommonPasswords.all.contains(""))
        #expect(CommonPasswords.all.allSatisfy { !$0.contains("\n") && !$0.contains("\r") })
        #expect(!CommonPasswords.contains("eyphed\n"))
        // Lines 1,159, 6,082 and 9,634, long enough for the length rule to let them reach the list.
        for entry in ["1234567890", "Christopher", "1q2w3e4r5t"] {
            #expect(PasswordPolicy.weakness(of: entry, email: "x@example.com") == "the password is one of the 10,000 most common passwords")
        }
        #expect(PasswordPolicy.weakness(of: "1q2w3e4r5t6y", email: "x@example.com") == nil)
    }

    @Test func theEmailsLocalPartMayNotBeInThePassword() {
        #expect(PasswordPolicy.weakness(of: "my Ada.Lovelace 1815", email: "ada.lovelace@example.com")
            == "the password must not contain the email address's name")
        #expect(PasswordPolicy.weakness(of: "correct horse battery", email: "ada@example.com") == nil)
        #expect(PasswordPolicy.weakness(of: "xadax-staple-battery", email: "ada@example.com") != nil)
        // A one- or two-letter name is too short to look for.
        #expect(PasswordPolicy.weakness(of: "a battery staple", email: "a@example.com") == nil)
    }
}
