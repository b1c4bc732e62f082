/// A request body as it arrives, held in pieces of at most 64 KiB and joined into one array once
/// complete.
///
/// One array grown as bytes arrive holds up to twice what arrived, and each growth leaves the
/// allocator a freed block that a longer-lived one soon sits beside, which it cannot give back:
/// 200 clients holding almost 1 MiB each cost the server 80 MiB for 64 MiB of bodies. Pieces of
/// one size hold what arrived and one piece more at most, and a freed piece fits the next.
struct BodyBuffer {
    static let pieceSize = 64 * 1024

    private var pieces: [[UInt8]] = []
    /// Bytes appended.
    private(set) var count = 0
    /// Allocated capacity of the pieces: the memory the body holds.
    private(set) var capacity = 0

    /// Appends `bytes`; `limit` is the most the whole body can be, so the last piece is made no
    /// larger than what can still come.
    mutating func append(_ bytes: ArraySlice<UInt8>, limit: Int) {
        var rest = bytes
        while !rest.isEmpty {
            if pieces.isEmpty || pieces[pieces.count - 1].count == pieces[pieces.count - 1].capacity {
                var piece: [UInt8] = []
                piece.reserveCapacity(max(1, min(Self.pieceSize, limit - count)))
                capacity += piece.capacity
                pieces.append(piece)
            }
            let last = pieces.count - 1
            let taken = rest.prefix(pieces[last].capacity - pieces[last].count)
            pieces[last].append(contentsOf: taken)
            count += taken.count
            rest = rest.dropFirst(taken.count)
        }
    }

    /// The whole body, leaving this empty.
    mutating func take() -> [UInt8] {
        defer { self = BodyBuffer() }
        if pieces.count == 1 { return pieces[0] }
        var body: [UInt8] = []
        body.reserveCapacity(count)
        for piece in pieces { body.append(contentsOf: piece) }
        return body
    }
}
