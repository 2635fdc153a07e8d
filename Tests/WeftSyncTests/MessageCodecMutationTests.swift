import Testing
import WeftCore
@testable import WeftSync

/// A peer can send any bytes. Every sample message, with a few of its bytes changed, inserted or
/// removed, either decodes to a message that encodes and decodes to itself again or is refused with a
/// ``SyncError``: never a crash, never a message that does not survive its own round trip.
@Suite struct MessageCodecMutationTests {
    @Test func mutatedPayloadsDecodeToAStableMessageOrGiveATypedError() {
        let messages = Samples.messages
        var generator = SeededGenerator(seed: 0x5EED_F00D)
        var decoded = 0
        for round in 0..<20_000 {
            let message = messages[round % messages.count]
            let payload = Self.mutated(
                Array(MessageCodec.encode(message).dropFirst(SyncLimits.frameHeaderBytes)), using: &generator)
            do throws(SyncError) {
                let result = try MessageCodec.decode(Frame(type: message.type.rawValue, payload: payload))
                decoded += 1
                let bytes = MessageCodec.encode(result)
                let again = try MessageCodec.decode(
                    Frame(type: result.type.rawValue, payload: Array(bytes.dropFirst(SyncLimits.frameHeaderBytes))))
                #expect(again == result, "round \(round): \(message.type) decoded unstably")
            } catch {
                #expect(
                    [.malformedFrame, .unsupportedVersion, .unknownMessage].contains(error.code),
                    "round \(round): \(error)")
            }
        }
        // Some mutations land in a value or a stamp and still parse: the decoded branch is exercised.
        #expect(decoded > 1_000)
        #expect(decoded < 19_000)
    }

    /// `bytes` with one to four edits: a byte replaced, a bit flipped, a byte inserted or removed, a
    /// byte set to a boundary value, or the tail cut off.
    static func mutated(_ bytes: [UInt8], using generator: inout SeededGenerator) -> [UInt8] {
        var bytes = bytes
        for _ in 0..<generator.int(in: 1...4) where !bytes.isEmpty {
            let at = Int(generator.below(UInt64(bytes.count)))
            switch generator.below(6) {
            case 0: bytes[at] = UInt8(truncatingIfNeeded: generator.next())
            case 1: bytes[at] ^= 1 << UInt8(generator.below(8))
            case 2: bytes.insert(UInt8(truncatingIfNeeded: generator.next()), at: at)
            case 3: bytes.remove(at: at)
            case 4: bytes[at] = [0x00, 0x7F, 0x80, 0xFF][Int(generator.below(4))]
            default: bytes.removeSubrange(at...)
            }
        }
        return bytes
    }
}
