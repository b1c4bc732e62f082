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

    /// docs/guides/team-transfer.md: a cell a spreadsheet would run as a formula gets a leading `'`; the import
    /// takes exactly that quote off again.
    @Test(arguments: [
        ("=HYPERLINK(\"http://x\")", "\"'=HYPERLINK(\"\"http://x\"\")\""),
        ("+1", "'+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tcmd", "'\tcmd"),
        ("\rcmd", "\"'\rcmd\""),
        ("=1,2", "\"'=1,2\""),
        // Quotes then a formula character: one more quote, so the reading is never ambiguous.
        ("'=1", "''=1"),
        ("''+1", "'''+1"),
    ])
    func aCellThatWouldRunAsAFormulaIsWrittenWithALeadingQuote(_ externalID: String, _ written: String) throws {
        let record = TransferRecord(userID: "usr_1", externalID: externalID, transferSub: "760417.ebbf.1827")
        let text = TransferCSV.render([record])
        #expect(text == "user_id,external_id,transfer_sub\nusr_1,\(written),760417.ebbf.1827\n")
        #expect(try Self.parse(text) == [record], "read back as it was")
    }

    /// Anything else is written as before: no quote added, RFC 4180 quoting unchanged.
    @Test(arguments: [
        ("crm-1042", "crm-1042"), ("plain", "plain"), ("'quoted", "'quoted"), ("'", "'"), ("a=b", "a=b"), (" =1", " =1"),
        ("x@example.com", "x@example.com"), ("crm, \"gold\"", "\"crm, \"\"gold\"\"\""), ("two\nlines", "\"two\nlines\""),
    ])
    func anyOtherCellIsWrittenAsBefore(_ externalID: String, _ written: String) throws {
        let record = TransferRecord(userID: "usr_1", externalID: externalID, transferSub: "760417.ebbf.1827")
        let text = TransferCSV.render([record])
        #expect(text == "user_id,external_id,transfer_sub\nusr_1,\(written),760417.ebbf.1827\n")
        #expect(try Self.parse(text) == [record])
    }

    /// Every cell is guarded, not only `external_id`: an id or `transfer_sub` that starts
    /// with a formula character reads back the same too.
    @Test func everyColumnIsGuardedAndRoundTrips() throws {
        let records = [
            TransferRecord(userID: "-usr_1", externalID: "@crm", transferSub: "=760417.ebbf.1827"),
            TransferRecord(userID: "usr_2", externalID: nil, transferSub: "+760418.aaaa.0001"),
        ]
        let text = TransferCSV.render(records)
        #expect(text == "user_id,external_id,transfer_sub\n'-usr_1,'@crm,'=760417.ebbf.1827\nusr_2,,'+760418.aaaa.0001\n")
        #expect(try Self.parse(text) == records)
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
