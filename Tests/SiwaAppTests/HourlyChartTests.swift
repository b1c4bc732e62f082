import Testing
@testable import SiwaApp

@Suite struct HourlyChartTests {
    /// 2026-11-27T00:00:00Z, and the 48 hours from 2026-11-25T00:00Z up to it.
    static let midnight: Int64 = 1_795_737_600
    static let hours = (0..<48).map { midnight - 48 * 3_600 + Int64($0) * 3_600 }

    static func chart(_ series: [HourlyChart.Series], title: String = "Sign-ins per hour") -> HourlyChart {
        HourlyChart(id: "signins", title: title, hours: hours, series: series)
    }

    static func counts(_ at: [Int: Int]) -> [Int] {
        (0..<48).map { at[$0] ?? 0 }
    }

    @Test func theCountAxisTakesARoundStepAndAtMostFiveGridlines() {
        #expect(HourlyChart.axis(for: 0) == (1, 4))
        #expect(HourlyChart.axis(for: 3) == (1, 3))
        #expect(HourlyChart.axis(for: 5) == (1, 5))
        #expect(HourlyChart.axis(for: 6) == (2, 3))
        #expect(HourlyChart.axis(for: 40) == (10, 4))
        #expect(HourlyChart.axis(for: 88) == (20, 5))
        #expect(HourlyChart.axis(for: 110) == (25, 5))
        #expect(HourlyChart.axis(for: 1_234) == (250, 5))
        for peak in [1, 7, 13, 99, 101, 4_999, 123_456] {
            let axis = HourlyChart.axis(for: peak)
            #expect(axis.step * axis.lines >= peak)
            #expect(axis.step * (axis.lines - 1) < peak)
            #expect(axis.lines <= 5)
        }
    }

    @Test func everyBarIsDrawnToScaleAndNamesItsHourAndNumbers() {
        let svg = Self.chart([
            .init(name: "apple", counts: Self.counts([47: 30, 10: 5])),
            .init(name: "password", counts: Self.counts([47: 10])),
        ]).svg()
        // The last hour totals 40, so the axis tops at 40 and that bar fills the plot's 180 units.
        #expect(svg.contains(#">40</text>"#))
        #expect(svg.contains(#"height="135""#))  // 30 of 40
        #expect(svg.contains(#"height="45""#))  // 10 of 40
        #expect(svg.contains("<title>11-26 23:00 UTC: 40 (apple 30, password 10)</title>"))
        #expect(svg.contains("<title>11-25 10:00 UTC: 5 (apple 5, password 0)</title>"))
        // Hours without sign-ins have a title but no rectangle: 2 series in one hour, 1 in another.
        #expect(svg.components(separatedBy: #"class="chart-bar""#).count - 1 == 3)
    }

    @Test func readsWithoutColourThroughPatternsALegendAndADescription() {
        let chart = Self.chart([
            .init(name: "apple", counts: Self.counts([3: 2])),
            .init(name: "password", counts: Self.counts([3: 1, 30: 6])),
        ])
        let svg = chart.svg()
        #expect(svg.contains(#"role="img""#))
        #expect(svg.contains(#"<desc id="signins-desc">Sign-ins per hour: 9 in the last 48 hours (apple 2, password 7); the busiest hour, 06:00 UTC, had 6.</desc>"#))
        // Series differ by pattern, not only by colour: the second is hatched.
        #expect(svg.contains(#"fill="url(#signins-fill-0)""#))
        #expect(svg.contains(#"fill="url(#signins-fill-1)""#))
        #expect(svg.contains(#"<pattern id="signins-fill-1""#) && svg.contains("chart-stroke"))
        let legend = chart.legend()
        #expect(legend.contains(#"apple <span class="muted">2</span>"#))
        #expect(legend.contains(#"password <span class="muted">7</span>"#))
        #expect(legend.contains(#"fill="url(#signins-swatch-1)""#))
    }

    @Test func labelsTheHourAxisEverySixHoursInUTC() {
        let svg = Self.chart([.init(name: "failed", counts: Self.counts([:]))]).svg()
        for label in ["00:00", "06:00", "12:00", "18:00"] {
            #expect(svg.contains(">\(label)</text>"))
        }
        #expect(!svg.contains(">01:00</text>"))
        #expect(svg.contains("none in the last 48 hours"))
    }

    /// The console's CSP forbids inline style and script; the chart must need neither, and a
    /// title that came from anywhere is escaped.
    @Test func usesNoStyleAttributeOrScriptAndEscapesItsText() {
        let svg = Self.chart([.init(name: "<b>x</b>", counts: Self.counts([1: 1]))], title: "a \"quoted\" <title>").svg()
        #expect(!svg.contains("style="))
        #expect(!svg.contains("<script"))
        #expect(svg.contains("a &quot;quoted&quot; &lt;title&gt;"))
        #expect(svg.contains("&lt;b&gt;x&lt;/b&gt; 1"))
        #expect(!svg.contains("<b>"))
    }
}
