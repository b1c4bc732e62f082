/// The keys of the pages' words: each is a `key=text` line in `Strings/pages.en.txt` and
/// `Strings/pages.ko.txt` (`PageWordsTests` checks that both files hold exactly these keys), so
/// a page can only ask for words that exist in both languages.
enum PageText: String, Sendable, CaseIterable {
    // Every page
    case siteName, languageSwitch, languageEnglish, languageKorean, backToSignIn
    // The Sign in with Apple button (Apple's own titles)
    case appleSignIn, appleContinue, appleFailed
    // The sign-in page
    case homeTitle, homeLead, homeLeadDemo, homeDemoWebhooks, homeDemoMailbox, homeDemoMailboxLink, homeCancelled, homeDeleted, homeSignedOut
    case homeResetRequested, homeResetDone, formEmail, formPassword, forgotPassword, sendResetCode, signInWithEmail
    case signInButton, createAccountHeading, formGivenName, passwordRules, createAccountButton
    // What the sign-in page and the reset page say for a form's error=
    case noticeInvalidCredentials, noticeTooManyAttempts, noticeAccountExists, noticeWeakPassword
    case noticeInvalidRequest, noticeBusy, noticeInvalidGrant, noticeNotConfigured
    // The reset page
    case resetTitle, resetCode, newPassword, setPasswordButton
    // The verification page
    case verifyTitle, verifyPrompt, verifyWarning, verifyButton, verifyDone, verifyInvalidCode, verifyFailed
    // The account page
    case accountTitle, accountGreeting, accountHello, accountLeadPassword, accountLeadApple, notShared, badgeRelay
    case badgeUnverified, forwardingEnabled, forwardingDisabled, profileHeading, profileName, profileEmail
    case profileForwarding, profileAppleID, profileMemberSince, sessionsHeading, sessionDevice, sessionSignedIn
    case sessionLastSeen, sessionExpires, sessionFrom, sessionMethodApple, sessionMethodPassword, sessionMethodUpgrade
    case sessionMethodExchange, sessionMethodWeb, sessionUnnamed, sessionThisBrowser, sessionEnd, signOut, endOtherSessions
    case deleteHeading, deleteExplanation, deleteConfirm, deleteButton
    // What the account page says after a form
    case accountOthersEnded, accountSessionEnded, accountWelcome, accountAppleAdded, accountAppleRemoved
    case accountPasswordSet, accountPasswordRemoved
    // The account page's sign-in methods
    case methodsHeading, methodApple, methodPassword, methodAdded, methodAddedRevoked, methodNotAdded, methodAddApple
    case methodRemove, methodSet, methodNotSet, currentPassword, newPasswordFor, changePasswordButton, methodsNote
    // What the account page says for a form's error=
    case problemReauthenticate, problemInvalidCredentials, problemLastSignInMethod, problemAccountExists
    case problemInvalidRequest, problemEmailUnverified
    // Error pages: a title and what happened
    case errorRefused, errorForeignOrigin, errorFormExpired, errorUnreadable, errorNotDeleted
    case errorDeletionNotConfirmed, errorNotSetUp, errorNoWebClientID, errorTryAgain, errorDatabaseUnavailable
    case errorUnexpected, errorNothingChanged, signInFailed, signInExpired, signInRefused, signInIncomplete
    case signInUnknownState, signInTookTooLong, signInOtherBrowser, signInNotThisSignIn, signInUnverified
    case signInAppleRefused, appleUnavailable, appleUnreachable, accountExistsTitle, accountExistsMessage
    case appleIDInUseTitle, appleIDInUseMessage, appleNotAdded, appleOtherAppleID, appleEmailUnverified
    case appleSessionEnded, signInNotSaved
}
