import Synchronization
import Testing
@testable import SiwaApp

/// The transfer commands' pace: at most `rate` calls a second; throttling or failures halve
/// it and pause with a doubling wait, successes win it back; too many failures in a row stop.
/// And their console: a progress line only on a terminal, redrawn at most ten times a second.
@Suite struct TransferPacerTests {
    @Test func callsAreSpacedByTheRate() {
        var pacer = TransferPacer(TransferPacing(rate: 10))
        #expect(pacer.delayBeforeCall(now: 100) == 0)
        #expect(abs(pacer.delayBeforeCall(now: 100) - 0.1) < 1e-9)
        #expect(abs(pacer.delayBeforeCall(now: 100.05) - 0.15) < 1e-9)
        // After a quiet spell there is no burst beyond the next slot.
        #expect(pacer.delayBeforeCall(now: 200) == 0)
        #expect(abs(pacer.delayBeforeCall(now: 200) - 0.1) < 1e-9)
    }

    @Test func failuresSlowTheRunAndSuccessesWinItBack() {
        var pacer = TransferPacer(TransferPacing(rate: 100, firstBackoff: 0.2, maximumBackoff: 1, maximumTries: 5))
        #expect(pacer.failed() == 0.2)
        #expect(pacer.currentRate == 50)
        #expect(pacer.failed() == 0.4)
        #expect(pacer.failed() == 0.8)
        #expect(pacer.failed() == 1, "capped")
        #expect(pacer.currentRate == 6.25)
        #expect(pacer.failed() == nil, "the fifth unavailable answer in a row stops the run")
        pacer.succeeded()
        #expect(pacer.failed() == 0.2, "a success starts the pauses over")
        for _ in 0..<100 { pacer.succeeded() }
        #expect(pacer.currentRate == 100, "back to the rate asked for, never above")
    }

    @Test func progressIsDrawnOnlyOnATerminalAndNotTooOften() {
        let written = Mutex<[String]>([])
        let now = Mutex(0.0)
        let terminal = TransferConsole(isTerminal: true, monotonic: { now.withLock { $0 } }) { text in written.withLock { $0.append(text) } }
        terminal.progress("1 of 3")
        terminal.progress("2 of 3")
        now.withLock { $0 = 0.2 }
        terminal.progress("3 of 3")
        terminal.line("done")
        #expect(written.withLock { $0 } == ["\r\u{1B}[K1 of 3", "\r\u{1B}[K3 of 3", "\r\u{1B}[Kdone\n"])

        let piped = Mutex<[String]>([])
        let pipe = TransferConsole(isTerminal: false, monotonic: { 0 }) { text in piped.withLock { $0.append(text) } }
        pipe.progress("1 of 3")
        pipe.line("done")
        #expect(piped.withLock { $0 } == ["done\n"])
    }
}
