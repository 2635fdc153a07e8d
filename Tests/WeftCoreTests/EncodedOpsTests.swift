import Testing

@testable import WeftCore

/// Ops read with the bytes each came in.
@Suite struct EncodedOpsTests {
    let origin = ReplicaID(rawValue: 0x0102_0304_0506_0708)!

    func op(_ sequence: UInt64, _ path: String, _ kind: OpKind) throws -> Op {
        Op(
            stamp: Stamp(millis: 1_700_000_000_000 + sequence, counter: 0, replica: origin), sequence: sequence,
            path: try Path(path), kind: kind)
    }

    @Test func eachOpKeepsExactlyItsOwnBytes() throws {
        let ops = [
            try op(1, "/a", .set(.object(["x": .int(1), "y": .string("z")]))),
            try op(2, "/b", .increment(by: .double(0.5), from: .int(0))),
            try op(3, "/", .batch([.set(try Path("/a"), .null), .increment(try Path("/b"), by: .int(1), from: .int(0))])),
        ]
        var writer = ByteWriter()
        for op in ops { OpCodec.write(op, to: &writer) }
        var reader = ByteReader(writer.bytes)
        let read = try EncodedOps.read(from: &reader, countMax: 3)
        #expect(reader.isAtEnd)
        #expect(read.ops == ops)
        #expect(read.encodings.map(Array.init) == ops.map(OpCodec.encode))
        #expect(read == EncodedOps(ops))
        #expect(read.subset([2, 0]).ops == [ops[2], ops[0]])
        #expect(read.subset([2, 0]).encodings.map(Array.init) == [OpCodec.encode(ops[2]), OpCodec.encode(ops[0])])
    }

    @Test func garbageTruncationAndTooManyOpsAreErrors() throws {
        let bytes = OpCodec.encode(try op(1, "/a", .set(.int(1))))
        var truncated = ByteReader(Array(bytes.dropLast()))
        #expect(throws: CoreError.self) { try EncodedOps.read(from: &truncated, countMax: 10) }
        var garbage = ByteReader([0xFF, 0x00, 0x13])
        #expect(throws: CoreError.self) { try EncodedOps.read(from: &garbage, countMax: 10) }
        var twice = ByteReader(bytes + bytes)
        #expect(throws: CoreError.self) { try EncodedOps.read(from: &twice, countMax: 1) }
    }
}
