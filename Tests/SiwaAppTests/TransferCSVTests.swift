import Store
import Testing
@testable import SiwaApp

/// The hand-over file: what `transfer export` writes, `transfer import` reads back exactly,
/// and anything else is refused with its line before anything changes.
@Suite struct TransferCSVTests {
    static func parse(_ text: String) throws(TransferCSV.Malformed) -> [TransferRecord] { try TransferCSV.parse(Array(text.utf8)) }

    @Test func whatIsWrittenReadsBackExactly() throws {
        let records = [
            TransferRecord(userID: "usr_1", externalID: nil, transferSub: "760417.ebbf.1827"),
            TransferRecord(userID: "usr_2", externalID: "crm, \"gold\"\nline two", transferSub: "760418.aaaa.0001"),
            TransferRecord(userID: "usr_3", externalID: "plain", transferSub: "760419.bbbb.0002"),
        ]
        let text = TransferCSV.render(records)
        #expect(text.hasPrefix("user_id,external_id,transfer_sub\nusr_1,,760417.ebbf.1827\n"))
        #expect(text.contains("usr_2,\"crm, \"\"gold\"\"\nline two\",760418.aaaa.0001\n"))
        #expect(try Self.parse(text) == records)
        #expect(try Self.parse(TransferCSV.header + "\n") == [], "no users is a file too")
    }

    @Test func spreadsheetHabitsAreRead() throws {
        // A byte-order mark, CRLF line ends and blank lines, as spreadsheets save files.
        let records = try Self.parse("\u{FEFF}user_id,external_id,transfer_sub\r\nusr_1,e1,ts1\r\n\r\nusr_2,,ts2\r\n")
        #expect(records == [
            TransferRecord(userID: "usr_1", externalID: "e1", transferSub: "ts1"),
            TransferRecord(userID: "usr_2", externalID: nil, transferSub: "ts2"),
        ])
    }

    @Test(arguments: [
        ("", 1, "the file is empty; expected the header user_id,external_id,transfer_sub"),
        ("user_id,sub,transfer_sub\n", 1, "the header must be user_id,external_id,transfer_sub"),
        ("user_id,external_id,transfer_sub\nusr_1,ts1\n", 2, "expected 3 fields, found 2"),
        ("user_id,external_id,transfer_sub\nusr_1,,ts1\n,,ts2\n", 3, "user_id is empty"),
        ("user_id,external_id,transfer_sub\nusr_1,,\n", 2, "transfer_sub is empty"),
        ("user_id,external_id,transfer_sub\nusr_1,,ts1\nusr_1,,ts2\n", 3, "user usr_1 appears twice"),
        ("user_id,external_id,transfer_sub\nusr_1,,ts1\nusr_2,,ts1\n", 3, "a transfer_sub appears twice"),
        ("user_id,external_id,transfer_sub\nusr_1,\"open,ts1\n", 2, "a quoted field is not closed"),
        ("user_id,external_id,transfer_sub\nusr_1,a\"b,ts1\n", 2, "a quote inside an unquoted field"),
        ("user_id,external_id,transfer_sub\nusr_1,\"a\"b,ts1\n", 2, "text after a closing quote"),
    ])
    func anythingElseIsRefusedWithItsLine(_ text: String, _ line: Int, _ reason: String) {
        #expect(throws: TransferCSV.Malformed(line: line, reason: reason)) { try Self.parse(text) }
    }

    @Test func bytesThatAreNotUTF8AreRefused() {
        #expect(throws: TransferCSV.Malformed(line: 1, reason: "the file is not UTF-8 text")) {
            try TransferCSV.parse(Array("user_id,external_id,transfer_sub\n".utf8) + [0xFF, 0xFE])
        }
    }
}
