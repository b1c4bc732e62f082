import Accounts
import HTTPServer

/// A bar chart of counts per hour, drawn by the server as inline SVG for the console (its
/// Content-Security-Policy allows no script and no inline style, so there is no chart library and
/// no `style` attribute: shapes use presentation attributes and the stylesheet's classes).
///
/// Readable without colour: each series of a stacked bar has its own fill pattern (solid, hatched,
/// dotted, cross-hatched) repeated in the legend beside its name and total, every bar carries a
/// `<title>` with its hour and numbers, and the whole chart a `<desc>` saying what a screen reader
/// needs (total and peak hour). Axes are labelled: counts on the left with gridlines at round
/// numbers, hours (UTC) below every six hours.
struct HourlyChart: Sendable {
    struct Series: Sendable, Equatable {
        var name: String
        /// One count per hour, oldest first; as many as the chart's hours.
        var counts: [Int]
    }

    /// Unique on its page: prefixes the pattern ids, which are document-wide in HTML.
    var id: String
    var title: String
    /// The start of each hour, seconds since 1970 (UTC), oldest first.
    var hours: [Int64]
    var series: [Series]

    init(id: String, title: String, hours: [Int64], series: [Series]) {
        precondition(series.allSatisfy { $0.counts.count == hours.count }, "a series must have one count per hour")
        self.id = id
        self.title = title
        self.hours = hours
        self.series = series
    }

    // Geometry of the drawing, in SVG user units (the viewBox scales it to the page's width).
    private static let width = 720
    private static let height = 220
    private static let left = 44
    private static let right = 8
    private static let top = 12
    private static let bottom = 28
    /// Fill patterns in the order series take them: the first is solid, so a one-series chart is
    /// plain bars.
    private static let patterns = ["solid", "hatch", "dots", "cross", "light"]

    func svg() -> String {
        let plotWidth = Self.width - Self.left - Self.right
        let plotHeight = Self.height - Self.top - Self.bottom
        let totals = hours.indices.map { hour in series.reduce(0) { $0 + max(0, $1.counts[hour]) } }
        let axis = Self.axis(for: totals.max() ?? 0)
        let scale = axis.step * axis.lines
        let slot = hours.isEmpty ? 0 : Double(plotWidth) / Double(hours.count)
        let barWidth = max(1, slot * 0.72)
        var out = ""
        out.reserveCapacity(4096 + hours.count * series.count * 120)
        out += #"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \#(Self.width) \#(Self.height)" role="img" aria-labelledby="\#(id)-title \#(id)-desc">"#
        out += #"<title id="\#(id)-title">\#(HTMLText.escape(title))</title>"#
        out += #"<desc id="\#(id)-desc">\#(HTMLText.escape(description(totals: totals)))</desc>"#
        out += definitions()
        // Gridlines and the count axis: 0 and each round step up to the scale.
        for line in 0...axis.lines {
            let value = axis.step * line
            let y = Double(Self.top) + Double(plotHeight) * (1 - Double(line) / Double(axis.lines))
            out += #"<line class="chart-grid" x1="\#(Self.left)" x2="\#(Self.width - Self.right)" y1="\#(Self.format(y))" y2="\#(Self.format(y))"/>"#
            out += #"<text class="chart-label" x="\#(Self.left - 6)" y="\#(Self.format(y + 4))" text-anchor="end">\#(value)</text>"#
        }
        for (index, start) in hours.enumerated() {
            let x = Double(Self.left) + slot * Double(index) + (slot - barWidth) / 2
            var y = Double(Self.top + plotHeight)
            out += "<g><title>\(HTMLText.escape(barTitle(hour: index, start: start, total: totals[index])))</title>"
            for (seriesIndex, series) in series.enumerated() where series.counts[index] > 0 {
                let barHeight = Double(plotHeight) * Double(series.counts[index]) / Double(scale)
                y -= barHeight
                out += #"<rect x="\#(Self.format(x))" y="\#(Self.format(y))" width="\#(Self.format(barWidth))" height="\#(Self.format(barHeight))" fill="url(#\#(patternID(seriesIndex)))" class="chart-bar"/>"#
            }
            out += "</g>"
            if Self.hourOfDay(start) % 6 == 0 {
                let centre = Double(Self.left) + slot * (Double(index) + 0.5)
                out += #"<line class="chart-axis" x1="\#(Self.format(centre))" x2="\#(Self.format(centre))" y1="\#(Self.top + plotHeight)" y2="\#(Self.top + plotHeight + 4)"/>"#
                out += #"<text class="chart-label" x="\#(Self.format(centre))" y="\#(Self.height - 10)" text-anchor="middle">\#(Self.hourLabel(start))</text>"#
            }
        }
        out += #"<line class="chart-axis" x1="\#(Self.left)" x2="\#(Self.width - Self.right)" y1="\#(Self.top + plotHeight)" y2="\#(Self.top + plotHeight)"/>"#
        out += "</svg>"
        return out
    }

    /// The legend, as HTML beside the chart: a swatch drawn with the series' own pattern, its
    /// name and its total over the chart's hours.
    func legend() -> String {
        var out = #"<ul class="chart-legend">"#
        for (index, series) in series.enumerated() {
            let total = series.counts.reduce(0) { $0 + max(0, $1) }
            out += #"<li><svg class="chart-swatch" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 14 14" aria-hidden="true">"#
            out += definitions(only: index)
            out += #"<rect x="0.5" y="0.5" width="13" height="13" fill="url(#\#(patternID(index, swatch: true)))" class="chart-bar"/></svg>"#
            out += "\(HTMLText.escape(series.name)) <span class=\"muted\">\(total)</span></li>"
        }
        return out + "</ul>"
    }

    private func description(totals: [Int]) -> String {
        let total = totals.reduce(0, +)
        guard let peak = totals.indices.max(by: { totals[$0] < totals[$1] }), totals[peak] > 0 else {
            return "\(title): none in the last \(hours.count) hours."
        }
        let names = series.map { "\($0.name) \($0.counts.reduce(0) { $0 + max(0, $1) })" }.joined(separator: ", ")
        return "\(title): \(total) in the last \(hours.count) hours (\(names)); the busiest hour, \(Self.hourLabel(hours[peak])) UTC, had \(totals[peak])."
    }

    private func barTitle(hour: Int, start: Int64, total: Int) -> String {
        let parts = series.map { "\($0.name) \(max(0, $0.counts[hour]))" }
        return "\(Self.dayLabel(start)) \(Self.hourLabel(start)) UTC: \(total)" + (series.count > 1 ? " (" + parts.joined(separator: ", ") + ")" : "")
    }

    private func patternID(_ series: Int, swatch: Bool = false) -> String {
        "\(id)-\(swatch ? "swatch" : "fill")-\(series)"
    }

    /// The `<defs>` of every series' pattern (or of one, for a legend swatch, which is its own
    /// SVG and cannot see the chart's).
    private func definitions(only: Int? = nil) -> String {
        var out = "<defs>"
        for index in series.indices where only == nil || only == index {
            let kind = Self.patterns[index % Self.patterns.count]
            let patternID = patternID(index, swatch: only != nil)
            out += #"<pattern id="\#(patternID)" patternUnits="userSpaceOnUse" width="6" height="6">"#
            switch kind {
            case "solid":
                out += #"<rect class="chart-ink" width="6" height="6"/>"#
            case "hatch":
                out += #"<rect class="chart-paper" width="6" height="6"/><path class="chart-stroke" d="M-1,1 l2,-2 M0,6 l6,-6 M5,7 l2,-2"/>"#
            case "dots":
                out += #"<rect class="chart-paper" width="6" height="6"/><circle class="chart-ink" cx="3" cy="3" r="1.4"/>"#
            case "cross":
                out += #"<rect class="chart-paper" width="6" height="6"/><path class="chart-stroke" d="M0,3 h6 M3,0 v6"/>"#
            default:
                out += #"<rect class="chart-light" width="6" height="6"/>"#
            }
            out += "</pattern>"
        }
        return out + "</defs>"
    }

    /// The count axis: the smallest round step (1, 2, 2.5 or 5 × 10ⁿ, whole numbers only) that
    /// reaches the peak in at most five gridlines, and how many it takes (four for an empty chart).
    static func axis(for peak: Int) -> (step: Int, lines: Int) {
        guard peak > 0 else { return (1, 4) }
        var magnitude = 1
        while true {
            let steps = magnitude == 1 ? [1, 2, 5] : [magnitude, 2 * magnitude, 5 * magnitude / 2, 5 * magnitude]
            for step in steps {
                let lines = (peak + step - 1) / step
                if lines <= 5 { return (step, lines) }
            }
            magnitude *= 10
        }
    }

    static func hourOfDay(_ start: Int64) -> Int {
        Int(((start % 86_400) + 86_400) % 86_400 / 3_600)
    }

    static func hourLabel(_ start: Int64) -> String {
        let hour = hourOfDay(start)
        return (hour < 10 ? "0" : "") + "\(hour):00"
    }

    /// "11-27" (month and day) for a bar's title: the 48 hours span three days.
    static func dayLabel(_ start: Int64) -> String {
        String(RFC3339.format(start).dropFirst(5).prefix(5))
    }

    private static func format(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(abs(tenths % 10))"
    }
}
