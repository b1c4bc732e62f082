/// The template files as SwiftPM embedded them (`PackageResources`, one array of bytes per file).
enum EmbeddedTemplates {
    static func text(_ file: String) -> String {
        guard let bytes = files[file] else { preconditionFailure("no template file \(file)") }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `security_changes.<language>.txt`: one `change=phrase` per line.
    static func changePhrase(_ change: SecurityChange, _ language: Language) -> String {
        for line in text("security_changes.\(language.rawValue).txt").split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0] == change.rawValue { return String(parts[1]) }
        }
        preconditionFailure("no phrase for \(change.rawValue) in \(language.rawValue)")
    }

    /// Every template file by its name; `MailTemplatesTests` renders each kind in each language, so a
    /// file missing from this table fails a test, not a delivery.
    static let files: [String: [UInt8]] = [
        "account_deleted.en.html": PackageResources.account_deleted_en_html,
        "account_deleted.en.subject.txt": PackageResources.account_deleted_en_subject_txt,
        "account_deleted.en.txt": PackageResources.account_deleted_en_txt,
        "account_deleted.ko.html": PackageResources.account_deleted_ko_html,
        "account_deleted.ko.subject.txt": PackageResources.account_deleted_ko_subject_txt,
        "account_deleted.ko.txt": PackageResources.account_deleted_ko_txt,
        "layout.en.html": PackageResources.layout_en_html,
        "layout.ko.html": PackageResources.layout_ko_html,
        "password_reset.en.html": PackageResources.password_reset_en_html,
        "password_reset.en.subject.txt": PackageResources.password_reset_en_subject_txt,
        "password_reset.en.txt": PackageResources.password_reset_en_txt,
        "password_reset.ko.html": PackageResources.password_reset_ko_html,
        "password_reset.ko.subject.txt": PackageResources.password_reset_ko_subject_txt,
        "password_reset.ko.txt": PackageResources.password_reset_ko_txt,
        "security_changes.en.txt": PackageResources.security_changes_en_txt,
        "security_changes.ko.txt": PackageResources.security_changes_ko_txt,
        "security_notice.en.html": PackageResources.security_notice_en_html,
        "security_notice.en.subject.txt": PackageResources.security_notice_en_subject_txt,
        "security_notice.en.txt": PackageResources.security_notice_en_txt,
        "security_notice.ko.html": PackageResources.security_notice_ko_html,
        "security_notice.ko.subject.txt": PackageResources.security_notice_ko_subject_txt,
        "security_notice.ko.txt": PackageResources.security_notice_ko_txt,
        "test.en.html": PackageResources.test_en_html,
        "test.en.subject.txt": PackageResources.test_en_subject_txt,
        "test.en.txt": PackageResources.test_en_txt,
        "test.ko.html": PackageResources.test_ko_html,
        "test.ko.subject.txt": PackageResources.test_ko_subject_txt,
        "test.ko.txt": PackageResources.test_ko_txt,
        "verify_email.en.html": PackageResources.verify_email_en_html,
        "verify_email.en.subject.txt": PackageResources.verify_email_en_subject_txt,
        "verify_email.en.txt": PackageResources.verify_email_en_txt,
        "verify_email.ko.html": PackageResources.verify_email_ko_html,
        "verify_email.ko.subject.txt": PackageResources.verify_email_ko_subject_txt,
        "verify_email.ko.txt": PackageResources.verify_email_ko_txt,
    ]
}
