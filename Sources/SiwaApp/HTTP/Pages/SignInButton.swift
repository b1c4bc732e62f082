import HTTPServer
import MailTemplates

/// The Sign in with Apple button, drawn to Apple's Human Interface Guidelines:
/// - styles black (for light backgrounds), white (for dark ones) and white with a black
///   outline (for white or light ones); logo and title in the same color;
/// - titles "Sign in with Apple", "Continue with Apple" (in Korean Apple's "Apple로 로그인",
///   "Apple로 계속하기"), or the logo alone in a square;
/// - at least 140 × 30 points with a title, the title in the system font at 43 % of the
///   height, the logo artwork scaled to the full height, and a clear space of a tenth of the
///   height on every side.
///
/// Sizes and colors live in `/static/siwa.css` (the pages' CSP allows no inline style), as
/// classes this type picks.
struct SignInButton: Sendable, Equatable {
    enum Style: String, Sendable, CaseIterable {
        case black
        case white
        case whiteOutline = "white-outline"
    }

    enum Title: String, Sendable, CaseIterable {
        case signIn = "sign-in"
        case continueWith = "continue"
        /// The logo alone, in a square.
        case logoOnly = "logo"

        /// Apple's own words for the title, in the page's language.
        func text(_ language: Language) -> String? {
            switch self {
            case .signIn: PageWords.text(.appleSignIn, language)
            case .continueWith: PageWords.text(.appleContinue, language)
            case .logoOnly: nil
            }
        }
    }

    /// Heights in CSS pixels; the smallest is the guidelines' minimum of 30.
    enum Size: String, Sendable, CaseIterable {
        case small, medium, large

        var height: Int {
            switch self {
            case .small: 32
            case .medium: 44
            case .large: 56
            }
        }
    }

    var style = Style.black
    var title = Title.signIn
    var size = Size.medium

    /// From the page's query (`?style=white-outline&title=continue&size=large`), so integrators
    /// can see every variant; unknown values keep the default.
    init(query: [String: String] = [:]) {
        style = query["style"].flatMap(Style.init(rawValue:)) ?? .black
        title = query["title"].flatMap(Title.init(rawValue:)) ?? .signIn
        size = query["size"].flatMap(Size.init(rawValue:)) ?? .medium
    }

    var classes: String {
        var classes = "siwa-button siwa-button--\(style.rawValue) siwa-button--\(size.rawValue)"
        if title == .logoOnly { classes += " siwa-button--logo" }
        return classes
    }

    /// A link to `href` (a link, not a form: the pages' `form-action 'self'` would stop a form
    /// that redirects to Apple), titled in `language`.
    func html(href: String, language: Language = .en, id: String = "sign-in-with-apple") -> String {
        let text = title.text(language)
        let label = text ?? PageWords.text(.appleSignIn, language)
        let content = text.map { #"\#(Self.logo(.leading))<span class="siwa-button__title">\#(HTMLText.escape($0))</span>"# }
            ?? Self.logo(.centered)
        return #"<a id="\#(id)" class="\#(classes)" href="\#(HTMLText.escape(href))" role="button" aria-label="\#(HTMLText.escape(label))">\#(content)</a>"#
    }

    enum LogoPlacement {
        /// Beside a title: the left-aligned artwork, 24 × 44 units, at the button's height.
        case leading
        /// Alone: the centered artwork in a 56-unit square.
        case centered
    }

    /// Apple's logo artwork for these buttons (the "Logo" sets of Apple's design resources),
    /// in the title's color through `currentColor`.
    static func logo(_ placement: LogoPlacement) -> String {
        switch placement {
        case .leading:
            #"<svg class="siwa-button__logo" viewBox="0 0 24 44" aria-hidden="true" focusable="false"><path fill="currentColor" d="\#(leadingPath)"/></svg>"#
        case .centered:
            #"<svg class="siwa-button__logo" viewBox="0 0 56 56" aria-hidden="true" focusable="false"><path fill="currentColor" d="\#(centeredPath)"/></svg>"#
        }
    }

    static let leadingPath = """
        M12.2337427,16.9879688 C12.8896607,16.9879688 13.7118677,16.5445313 14.2014966,15.9532812 C14.6449341,15.4174609 \
        14.968274,14.6691602 14.968274,13.9208594 C14.968274,13.8192383 14.9590357,13.7176172 14.9405591,13.6344727 \
        C14.2107349,13.6621875 13.3330982,14.1241016 12.8065162,14.7430664 C12.3907935,15.2142188 12.012024,15.9532812 \
        12.012024,16.7108203 C12.012024,16.8216797 12.0305005,16.9325391 12.0397388,16.9694922 C12.0859302,16.9787305 \
        12.1598365,16.9879688 12.2337427,16.9879688 Z M9.92417241,28.1662891 C10.8202857,28.1662891 11.2175318,27.5658008 \
        12.3353638,27.5658008 C13.4716724,27.5658008 13.721106,28.1478125 14.7188404,28.1478125 C15.6980982,28.1478125 \
        16.3540162,27.2424609 16.972981,26.3555859 C17.6658521,25.339375 17.9522388,24.3416406 17.9707154,24.2954492 \
        C17.9060474,24.2769727 16.0306763,23.5101953 16.0306763,21.3576758 C16.0306763,19.491543 17.5088013,18.6508594 \
        17.5919459,18.5861914 C16.612688,17.1819727 15.1253248,17.1450195 14.7188404,17.1450195 C13.6194849,17.1450195 \
        12.7233716,17.8101758 12.1598365,17.8101758 C11.5501099,17.8101758 10.7463794,17.1819727 9.79483648,17.1819727 \
        C7.98413335,17.1819727 6.14571538,18.6785742 6.14571538,21.5054883 C6.14571538,23.2607617 6.8293482,25.1176563 \
        7.67003179,26.3186328 C8.39061773,27.3348438 9.01882085,28.1662891 9.92417241,28.1662891 Z
        """

    static let centeredPath = """
        M28.2226562,20.3846154 C29.0546875,20.3846154 30.0976562,19.8048315 30.71875,19.0317864 C31.28125,18.3312142 \
        31.6914062,17.352829 31.6914062,16.3744437 C31.6914062,16.2415766 31.6796875,16.1087095 31.65625,16 \
        C30.7304687,16.0362365 29.6171875,16.640178 28.9492187,17.4494596 C28.421875,18.06548 27.9414062,19.0317864 \
        27.9414062,20.0222505 C27.9414062,20.1671964 27.9648438,20.3121424 27.9765625,20.3604577 C28.0351562,20.3725366 \
        28.1289062,20.3846154 28.2226562,20.3846154 Z M25.2929688,35 C26.4296875,35 26.9335938,34.214876 28.3515625,34.214876 \
        C29.7929688,34.214876 30.109375,34.9758423 31.375,34.9758423 C32.6171875,34.9758423 33.4492188,33.792117 \
        34.234375,32.6325493 C35.1132812,31.3038779 35.4765625,29.9993643 35.5,29.9389701 C35.4179688,29.9148125 \
        33.0390625,28.9122695 33.0390625,26.0979021 C33.0390625,23.6579784 34.9140625,22.5588048 35.0195312,22.474253 \
        C33.7773438,20.6382708 31.890625,20.5899555 31.375,20.5899555 C29.9804688,20.5899555 28.84375,21.4596313 \
        28.1289062,21.4596313 C27.3554688,21.4596313 26.3359375,20.6382708 25.1289062,20.6382708 C22.8320312,20.6382708 \
        20.5,22.5950413 20.5,26.2911634 C20.5,28.5861411 21.3671875,31.013986 22.4335938,32.5842339 C23.3476562,33.9129053 \
        24.1445312,35 25.2929688,35 Z
        """
}
