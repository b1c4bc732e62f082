/// A short name for a web session in the session list ("Safari on macOS"), from the browser's
/// `User-Agent`. Only fixed words come out, never the header's own text.
enum DeviceName {
    static func describe(userAgent: String?) -> String {
        guard let agent = userAgent else { return "Web browser" }
        let browser: String =
            if agent.contains("Edg/") { "Edge" }
            else if agent.contains("Firefox/") { "Firefox" }
            else if agent.contains("Chrome/") || agent.contains("Chromium/") { "Chrome" }
            else if agent.contains("Safari/") { "Safari" }
            else { "Web browser" }
        let system: String? =
            if agent.contains("iPhone") { "iPhone" }
            else if agent.contains("iPad") { "iPad" }
            else if agent.contains("Android") { "Android" }
            else if agent.contains("Mac OS X") { "macOS" }
            else if agent.contains("Windows") { "Windows" }
            else if agent.contains("Linux") { "Linux" }
            else { nil }
        return system.map { "\(browser) on \($0)" } ?? browser
    }
}
