/// A fixture could not be set up; the text says what to look at.
struct SiwaTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
