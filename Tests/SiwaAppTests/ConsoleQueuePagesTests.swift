import Store
import Testing
@testable import SiwaApp

/// The failed-deliveries pages read one item more than they list: past that, the count is "200+",
/// never a number that looks exact but is only where the read stopped.
@Suite struct ConsoleQueuePagesTests {
    static func failed(_ count: Int) -> [FailedWebhookEvent] {
        (0..<count).map {
            FailedWebhookEvent(id: "evt_\($0)", type: "user.updated", userID: "usr_\($0)", attempts: 9, createdAt: 1, failedAt: 2, lastError: "HTTP 500")
        }
    }

    @Test func aListPastTheLimitSaysSoAndShowsTheLimit() {
        let html = ConsoleQueuePages.webhooks(Self.failed(ConsoleQueuePages.listed + 1), configured: true, done: nil, now: 10, csrf: "t")
        #expect(html.contains("200+ failed events (the oldest 200 shown)."))
        #expect(html.components(separatedBy: "/retry\"").count - 1 == ConsoleQueuePages.listed)
    }

    @Test func aListWithinTheLimitIsCountedExactly() {
        let html = ConsoleQueuePages.webhooks(Self.failed(3), configured: true, done: nil, now: 10, csrf: "t")
        #expect(html.contains("<p>3 failed events.</p>"))
        #expect(ConsoleQueuePages.failedCount(ConsoleQueuePages.listed) == "200")
        #expect(ConsoleQueuePages.failedCount(ConsoleQueuePages.listed + 1) == "200+")
    }
}
