import HTTPServer

/// The routes people use in a browser (docs/reference/http-api.md "Web flow"): the pages, the redirect to Apple and
/// Apple's callback, the account page's forms, and the pages' stylesheet and script.
enum WebRoutes {
    /// Their failures are pages (`ShownAsPage`), except the JSON refusals they throw on purpose.
    /// - Parameter limited: wraps the routes that write for clients not signed in (`rate_limit`).
    static func register(
        on router: inout Router, pages: AccountPages, signIn: WebSignIn, passwordForms: PasswordForms,
        limited: (@escaping HTTPHandler) -> HTTPHandler
    ) {
        let page = ShownAsPage.route
        router.add(.get, "/", page { try await pages.home($0) })
        router.add(.get, "/account", page { try await pages.account($0) })
        router.add(.get, "/auth/apple/login", page(limited { try await signIn.login($0) }))
        router.add(.post, "/auth/apple/callback", page(limited { try await signIn.callback($0) }))
        router.add(.post, "/account/logout", page { try await pages.logout($0) })
        router.add(.post, "/account/sessions/end-others", page { try await pages.endOtherSessions($0) })
        router.add(.post, "/account/sessions/{id}/end", page { try await pages.endSession($0) })
        router.add(.post, "/account/delete", page { try await pages.deleteAccount($0) })

        // docs/guides/passwords-and-email.md: email and password on the sign-in page, sign-in methods on the account page.
        router.add(.post, "/auth/password/sign-in", page(limited { try await passwordForms.signIn($0) }))
        router.add(.post, "/auth/password/sign-up", page(limited { try await passwordForms.signUp($0) }))
        router.add(.post, "/auth/password/reset-request", page(limited { try await passwordForms.resetRequest($0) }))
        router.add(.get, "/reset-password", page { try await passwordForms.resetPage($0) })
        router.add(.post, "/auth/password/reset", page(limited { try await passwordForms.reset($0) }))
        // docs/guides/passwords-and-email.md: the page a verification code leads to, and its button.
        router.add(.get, "/verify-email", page { try await passwordForms.verifyEmailPage($0) })
        router.add(.post, "/auth/email/verify", page(limited { try await passwordForms.verifyEmail($0) }))
        router.add(.post, "/account/password", page { try await pages.setPassword($0) })
        router.add(.post, "/account/password/remove", page { try await pages.removePassword($0) })
        router.add(.get, "/auth/apple/link", page(limited { try await pages.linkApple($0) }))
        router.add(.post, "/account/apple/remove", page { try await pages.removeApple($0) })

        let stylesheet = Array(StaticAssets.stylesheet.utf8)
        router.add(.get, "/static/siwa.css") { _ in
            HTTPResponse(headers: ["Content-Type": "text/css; charset=utf-8", "Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"], body: stylesheet)
        }
        let script = Array(StaticAssets.script.utf8)
        router.add(.get, "/static/siwa.js") { _ in
            HTTPResponse(headers: ["Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"], body: script)
        }
    }
}
