import Testing
import WeftCore
@testable import WeftSync

/// The error a decoding step throws, or nil when it succeeds.
func syncError(_ body: () throws -> Void) -> SyncError? {
    do {
        try body()
        return nil
    } catch let error as SyncError {
        return error
    } catch {
        Issue.record("expected a SyncError, got \(error)")
        return nil
    }
}

func frame(_ type: MessageType, _ payload: [UInt8]) -> Frame { Frame(type: type.rawValue, payload: payload) }

@Suite struct FrameDecoderMalformedInputTests {
    @Test func bytesFedOneAtATimeGiveTheSameMessages() throws {
        let bytes = Samples.messages.flatMap(MessageCodec.encode)
        var decoder = FrameDecoder()
        var messages: [Message] = []
        for byte in bytes {
            decoder.append([byte])
            while let frame = try decoder.nextFrame() { messages.append(try MessageCodec.decode(frame)) }
        }
        #expect(messages == Samples.messages)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func aTruncatedFrameWaitsForMoreBytes() throws {
        let bytes = MessageCodec.encode(.ops(EncodedOps(Samples.ops)))
        var decoder = FrameDecoder()
        decoder.append(bytes.dropLast())
        #expect(try decoder.nextFrame() == nil)
        #expect(decoder.bufferedByteCount == bytes.count - 1)
        decoder.append(bytes.suffix(1))
        #expect(try decoder.nextFrame() != nil)
    }

    @Test func anOversizedLengthIsRefusedAsSoonAsTheHeaderArrives() {
        var decoder = FrameDecoder(frameBytesMax: 1024)
        decoder.append([0, 0, 4, 0, MessageType.ops.rawValue])
        let error = syncError { _ = try decoder.nextFrame() }
        #expect(error?.code == .frameTooLarge)
        #expect(error?.message.contains("1028 bytes") == true)
    }

    @Test func theLargestLengthOfTheWireIsRefusedWithoutAllocating() {
        var decoder = FrameDecoder()
        decoder.append([0xFF, 0xFF, 0xFF, 0xFF])
        #expect(syncError { _ = try decoder.nextFrame() }?.code == .frameTooLarge)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func aZeroLengthIsMalformed() {
        var decoder = FrameDecoder()
        decoder.append([0, 0, 0, 0])
        #expect(syncError { _ = try decoder.nextFrame() }?.code == .malformedFrame)
    }

    @Test func theDecoderStaysFailedAfterAnError() {
        var decoder = FrameDecoder()
        decoder.append([0, 0, 0, 0])
        _ = syncError { _ = try decoder.nextFrame() }
        decoder.append(MessageCodec.encode(.ping(1)))
        #expect(syncError { _ = try decoder.nextFrame() }?.code == .malformedFrame)
    }

    @Test func anUnknownTypeByteIsATypedError() {
        let error = syncError { _ = try MessageCodec.decode(Frame(type: 200, payload: [])) }
        #expect(error?.code == .unknownMessage)
    }

    @Test(arguments: Samples.messages)
    func everyTruncatedPayloadGivesATypedError(message: Message) {
        let payload = Array(MessageCodec.encode(message).dropFirst(SyncLimits.frameHeaderBytes))
        for length in 0..<payload.count {
            let cut = Frame(type: message.type.rawValue, payload: Array(payload.prefix(length)))
            do throws(SyncError) {
                // An ops message cut between two ops is a shorter, valid batch; nothing else may decode.
                let decoded = try MessageCodec.decode(cut)
                guard case .ops(let ops) = decoded, case .ops(let all) = message else {
                    Issue.record("payload cut at \(length) of \(payload.count) decoded as \(decoded.type)")
                    continue
                }
                #expect(ops.ops == Array(all.prefix(ops.count)))
                #expect(ops.count < all.count)
            } catch {
                #expect(error.code == .malformedFrame, "payload cut at \(length) of \(payload.count)")
            }
        }
    }

    @Test(arguments: Samples.messages)
    func trailingBytesAreMalformed(message: Message) {
        let payload = Array(MessageCodec.encode(message).dropFirst(SyncLimits.frameHeaderBytes)) + [0]
        let error = syncError { _ = try MessageCodec.decode(Frame(type: message.type.rawValue, payload: payload)) }
        #expect(error?.code == .malformedFrame)
    }

    @Test func aHelloOfAnotherVersionNamesBothVersions() {
        var payload = Array(MessageCodec.encode(.hello(helloSample)).dropFirst(SyncLimits.frameHeaderBytes))
        payload[4] = 0
        payload[5] = 1
        let error = syncError { _ = try MessageCodec.decode(frame(.hello, payload)) }
        #expect(error?.code == .unsupportedVersion)
        #expect(error?.message == "protocol version 1 is not supported; this replica speaks version 3")
    }

    @Test func aHelloOfAnotherVersionIsRecognisedEvenWhenItsLayoutChanged() {
        let payload = Array("WEFT".utf8) + [0, 9] + [1, 2, 3]
        #expect(syncError { _ = try MessageCodec.decode(frame(.hello, payload)) }?.code == .unsupportedVersion)
    }

    @Test func aHelloWithoutTheMagicIsMalformed() {
        var payload = Array(MessageCodec.encode(.hello(helloSample)).dropFirst(SyncLimits.frameHeaderBytes))
        payload[0] = UInt8(ascii: "G")
        #expect(syncError { _ = try MessageCodec.decode(frame(.hello, payload)) }?.code == .malformedFrame)
    }

    @Test func aHelloWithAShareFlagOtherThanZeroOrOneIsMalformed() {
        var payload = Array(MessageCodec.encode(.hello(helloSample)).dropFirst(SyncLimits.frameHeaderBytes))
        payload[payload.count - 1] = 2
        let error = syncError { _ = try MessageCodec.decode(frame(.hello, payload)) }
        #expect(error?.code == .malformedFrame)
        #expect(error?.message.contains("share flag is 2") == true, "\(String(describing: error))")
    }

    @Test func aHelloWithATinyWindowIsMalformed() {
        var hello = helloSample
        hello.windowBytes = 10
        #expect(
            syncError { _ = try MessageCodec.decode(Frame(type: 1, payload: payload(of: .hello(hello)))) }?.code
                == .malformedFrame)
    }

    @Test func anOpsMessageWithTooManyOpsIsMalformed() {
        let op = Samples.ops[2]
        let one = OpCodec.encode(op)
        let payload = Array((0...SyncLimits.batchOpsMax).map { _ in one }.joined())
        let error = syncError { _ = try MessageCodec.decode(frame(.ops, payload)) }
        #expect(error?.code == .malformedFrame)
        #expect(error?.message.contains("more than \(SyncLimits.batchOpsMax) ops") == true)
    }

    @Test func anEmptyOpsMessageIsMalformed() {
        #expect(syncError { _ = try MessageCodec.decode(frame(.ops, [])) }?.code == .malformedFrame)
    }

    @Test func aSnapshotChunkClaimingMoreEntriesThanItsBytesIsRefusedBeforeAllocating() {
        var writer = ByteWriter()
        writer.write(varint: 1_000_000)
        #expect(syncError { _ = try MessageCodec.decode(frame(.snapshotChunk, writer.bytes)) }?.code == .malformedFrame)
    }

    @Test func aNullSnapshotEntryIsMalformed() {
        var writer = ByteWriter()
        writer.write(varint: 1)
        OpCodec.write(Path.root, to: &writer)
        OpCodec.write(Value.null, to: &writer)
        #expect(syncError { _ = try MessageCodec.decode(frame(.snapshotChunk, writer.bytes)) }?.code == .malformedFrame)
    }

    @Test func aRequestWithAnInvalidKeyIsMalformed() {
        var writer = ByteWriter()
        writer.write(varint: 1)
        writer.write(byte: 1)
        writer.write(varint: 1)
        writer.write(string: "a.b")
        let error = syncError { _ = try MessageCodec.decode(frame(.request, writer.bytes)) }
        #expect(error?.code == .malformedFrame)
        #expect(error?.message.contains("a.b") == true)
    }

    @Test func randomGarbageNeverTrapsAndOnlyThrowsSyncErrors() {
        var generator = SeededGenerator(seed: 77)
        var decoded = 0
        for _ in 0..<3000 {
            let length = Int(generator.below(48))
            let payload = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let type = MessageType.allCases[Int(generator.below(UInt64(MessageType.allCases.count)))]
            if (try? MessageCodec.decode(frame(type, payload))) != nil { decoded += 1 }
        }
        #expect(decoded < 3000)
    }

    @Test func mutatedValidFramesNeverTrap() {
        var generator = SeededGenerator(seed: 78)
        let encodings = Samples.messages.map(MessageCodec.encode)
        for _ in 0..<3000 {
            var bytes = encodings[Int(generator.below(UInt64(encodings.count)))]
            for _ in 0...generator.below(3) {
                let index = Int(generator.below(UInt64(bytes.count)))
                bytes[index] = UInt8(truncatingIfNeeded: generator.next())
            }
            var decoder = FrameDecoder()
            decoder.append(bytes)
            _ = syncError {
                while let frame = try decoder.nextFrame() { _ = try MessageCodec.decode(frame) }
            }
        }
    }

    var helloSample: Hello {
        Hello(replica: Samples.alice, role: .peer, name: "alice", nonce: Samples.nonce, versionVector: Samples.vector)
    }

    func payload(of message: Message) -> [UInt8] {
        Array(MessageCodec.encode(message).dropFirst(SyncLimits.frameHeaderBytes))
    }
}
