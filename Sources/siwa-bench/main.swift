// Measurement tool for Scripts/bench; not part of the product.
//   siwa-bench [verify] [SECONDS]     identity-token verification on one thread
//   siwa-bench scrypt [SECONDS]       one password hash (today's scrypt parameters) on one thread
//   siwa-bench fixture DIR [options]  an Apple ID simulator and pre-signed requests for the
//                                     account-layer benchmarks (see AppleFixture.swift)
//   siwa-bench webhook-receiver PORT SECRET [--hang]
//                                     a webhook receiver for the webhook benchmarks (WebhookSink.swift)
//   siwa-bench smtp-sink SMTP_PORT STATS_PORT [--silent]
//                                     an SMTP server for the mail benchmarks (SMTPSink.swift)
//   siwa-bench transfer-fixture DIR [--users N]
//                                     an Apple ID simulator with N people for the team-transfer
//                                     benchmark (see TransferFixture.swift)
import Glibc

var arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "fixture":
    arguments.removeFirst()
    try AppleFixture(arguments: arguments).run()
case "webhook-receiver":
    arguments.removeFirst()
    try WebhookSink(arguments: arguments).run()
case "smtp-sink":
    arguments.removeFirst()
    try SMTPSink(arguments: arguments).run()
case "transfer-fixture":
    arguments.removeFirst()
    try TransferFixture(arguments: arguments).run()
case "scrypt":
    arguments.removeFirst()
    try runPasswordHashBench(duration: Double(arguments.first ?? "3") ?? 3)
case "verify":
    arguments.removeFirst()
    try runVerificationBench(duration: Double(arguments.first ?? "3") ?? 3)
default:
    try runVerificationBench(duration: Double(arguments.first ?? "3") ?? 3)
}
