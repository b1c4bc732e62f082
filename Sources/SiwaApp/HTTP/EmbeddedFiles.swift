import CSiwaAppFiles

/// The files of the HTTP face that ship inside the binary: the OpenAPI document (`API/OpenAPI/`),
/// the pages' stylesheets and script (`Pages/Static/`) and their words (`Pages/Strings/`). They
/// are edited where they are; `CSiwaAppFiles` compiles them in with C's `#embed`.
enum EmbeddedFiles {
    static let openAPIJSON = bytes(siwa_file_openapi_json)
    static let siwaCSS = bytes(siwa_file_siwa_css)
    static let siwaJS = bytes(siwa_file_siwa_js)
    static let consoleCSS = bytes(siwa_file_console_css)
    static let pagesEnglish = bytes(siwa_file_pages_en_txt)
    static let pagesKorean = bytes(siwa_file_pages_ko_txt)

    private static func bytes(_ file: (UnsafeMutablePointer<Int>) -> UnsafePointer<UInt8>) -> [UInt8] {
        var length = 0
        let start = file(&length)
        return Array(UnsafeBufferPointer(start: start, count: length))
    }
}
