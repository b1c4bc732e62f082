import Accounts
import JSON

/// Apple's one-time `user` object (`{"name":{"firstName","lastName"},"email"}`), as a native
/// app forwards it or Apple posts it in the web flow's form (APPLE.md §1.2). Read in one place,
/// so both flows keep the same fields and the same size caps. Pure (JSON only), so the fuzzer
/// compiles it alone.
struct AppleUserObject: Sendable, Equatable {
    var givenName: String?
    var familyName: String?
    var email: String?

    init(givenName: String? = nil, familyName: String? = nil, email: String? = nil) {
        self.givenName = givenName
        self.familyName = familyName
        self.email = email
    }

    /// Fields of the wrong type are ignored, as Apple's own clients do; strings are cut.
    init(_ object: JSONObject) {
        let name = object["name"]?.object
        givenName = name?["firstName"]?.string.map { StoredText.cut($0) }
        familyName = name?["lastName"]?.string.map { StoredText.cut($0) }
        email = object["email"]?.string.map { StoredText.cut($0) }
    }
}
