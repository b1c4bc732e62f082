import Testing
@testable import SiwaApp

/// The body of `PATCH /admin/users/{id}`, read without a socket.
@Suite struct ExternalIDPatchTests {
    static func parse(_ text: String) throws(ExternalIDPatch.Invalid) -> ExternalIDPatch {
        try ExternalIDPatch(parsing: Array(text.utf8))
    }

    @Test func aStringSetsAndNullClears() throws {
        #expect(try Self.parse(#"{"external_id":"crm-42"}"#).externalID == "crm-42")
        #expect(try Self.parse(#"{"external_id":null}"#).externalID == nil)
        // 256 bytes of UTF-8 are kept whole, non-ASCII included.
        let long = String(repeating: "é", count: 128)
        #expect(try Self.parse(#"{"external_id":"\#(long)"}"#).externalID == long)
    }

    @Test func anythingElseIsRefused() {
        let bodies = [
            "", "not json", "[]", #""crm""#, "{}", #"{"external_id":42}"#, #"{"external_id":true}"#, #"{"external_id":{}}"#,
            #"{"external_id":""}"#, #"{"external_id":"a\u0000b"}"#, #"{"external_id":"a\nb"}"#, #"{"external_id":"a\u007fb"}"#,
            #"{"external_id":"a\u0085b"}"#, #"{"external_id":"\#(String(repeating: "x", count: 257))"}"#,
            #"{"external_id":"\#(String(repeating: "é", count: 129))"}"#, #"{"external_id":"a","email":"x"}"#, #"{"externalId":"a"}"#,
            #"{"external_id":"a","external_id":"b"}"#,
        ]
        for body in bodies {
            #expect(throws: ExternalIDPatch.Invalid.self, "\(body)") { try Self.parse(body) }
        }
    }
}
