import Testing
import WeftCore
@testable import WeftSync

/// Sample values of every message, shared by the codec tests.
enum Samples {
    static let alice = ReplicaID(rawValue: 0xA11CE)!
    static let bob = ReplicaID(rawValue: 0xB0B)!

    static var vector: VersionVector { VersionVector([alice: 12, bob: 3]) }

    static var nonce: AuthNonce {
        var generator = SeededGenerator(seed: 9)
        return AuthNonce.random(using: &generator)
    }

    static var proof: AuthProof { AuthProof(bytes: (0..<32).map { UInt8($0 * 7 % 256) })! }

    static func path(_ text: String) -> Path { try! Path(text) }

    static var tree: Value { try! Value(json: #"{"users":{"alice":{"score":3,"name":"Alice"},"bob":true},"pi":3.25}"#) }

    static var ops: [Op] {
        let children = try! MergeChild.validated([
            MergeChild(relative: path("x"), value: .int(1)), MergeChild(relative: path("y/z"), value: .string("z")),
        ])
        return [
            Op(stamp: Stamp(millis: 1000, counter: 0, replica: alice), sequence: 1, path: path("/a"), kind: .set(tree)),
            Op(
                stamp: Stamp(millis: 1001, counter: 2, replica: alice), sequence: 2, path: path("/b"),
                kind: .merge(children)),
            Op(
                stamp: Stamp(millis: 1002, counter: 0, replica: bob), sequence: 1, path: path("/c"),
                kind: .increment(by: .int(5), from: .double(1.5))),
            Op(
                stamp: Stamp(millis: 1003, counter: 0, replica: bob), sequence: 2, path: path("/"),
                kind: .batch([.set(path("/d"), .null), .increment(path("/e"), by: .int(-1), from: .int(0))])),
            Op(
                stamp: Stamp(millis: 1004, counter: 0, replica: bob), sequence: 3, path: path("/t"),
                kind: .transaction(read: vector, result: .bool(false))),
            Op(
                stamp: Stamp(millis: 1005, counter: 0, replica: alice), sequence: 3, path: path("/acct"),
                kind: .call(FunctionCall(name: "transfer", version: 2, arguments: tree))),
        ]
    }

    static var requests: [ClientRequest] {
        let children = try! MergeChild.validated([MergeChild(relative: path("k"), value: .int(4))])
        return [
            ClientRequest(id: 1, command: .get(path("/users/alice"))),
            ClientRequest(id: 2, command: .set(path("/users/bob"), tree)),
            ClientRequest(id: 3, command: .merge(path("/users"), children)),
            ClientRequest(id: 4, command: .push(path("/log"), .string("entry"))),
            ClientRequest(id: 5, command: .increment(path("/count"), by: .int(2), from: .int(10))),
            ClientRequest(id: 6, command: .watch(path("/users"))),
            ClientRequest(id: 7, command: .unwatch(watchID: 6)),
        ]
    }

    /// One message of every kind (and every client command).
    static var messages: [Message] {
        var result: [Message] = [
            .hello(
                Hello(
                    replica: alice, role: .hub, name: "alice", nonce: nonce, versionVector: vector, windowBytes: 65_536)
            ),
            .hello(Hello(replica: bob, role: .client, name: "", nonce: nonce, versionVector: VersionVector())),
            .hello(
                Hello(
                    replica: bob, role: .peer, name: "leaf1", nonce: nonce, versionVector: vector,
                    compactionStamp: Stamp(millis: 999, counter: 3, replica: alice), holdsShare: true)),
            .authResponse(proof),
            .welcome(proof),
            .ops(EncodedOps(ops)),
            .ack(Acknowledgement(versionVector: vector, stableFrontier: VersionVector([alice: 2]))),
            .ack(Acknowledgement(versionVector: VersionVector())),
            .ack(
                Acknowledgement(
                    versionVector: vector, stableFrontier: VersionVector([alice: 2]),
                    compactionStamp: Stamp(time: 99, replica: alice))),
            .snapshotBegin(SnapshotBegin(frontier: vector, entryCount: 3, byteCount: 120)),
            .snapshotBegin(
                SnapshotBegin(
                    frontier: vector, stampFrontier: Stamp(time: 77, replica: alice), entryCount: 3, byteCount: 120,
                    touchCount: 2)),
            .snapshotTouches([
                CompactedTouch(path: path("/users/a"), origin: alice, sequence: 4),
                CompactedTouch(path: .root, origin: bob, sequence: 1),
            ]),
            .snapshotChunk([
                SnapshotEntry(path: path("/users"), value: tree), SnapshotEntry(path: .root, value: .int(3)),
            ]),
            .snapshotEnd(StateDigest(of: tree)),
            .snapshotAck(chunkCount: 17),
            .ping(0),
            .pong(UInt64.max),
            .error(SyncError(.clockDrift, "stamp 70 s ahead", raisedByPeer: true)),
            .error(SyncError(SyncErrorCode(rawValue: 999), "a code from a newer peer", raisedByPeer: true)),
            .reply(ClientReply(id: 1, result: .ok(tree))),
            .reply(ClientReply(id: 2, result: .failed(SyncError(.requestFailed, "no", raisedByPeer: true)))),
            .event(ClientEvent(watchID: 6, path: path("/users"), value: .null)),
        ]
        result += requests.map(Message.request)
        result += queryMessages
        return result
    }
}

func decodeAll(_ bytes: [UInt8]) throws -> [Message] {
    var decoder = FrameDecoder()
    decoder.append(bytes)
    var messages: [Message] = []
    while let frame = try decoder.nextFrame() { messages.append(try MessageCodec.decode(frame)) }
    return messages
}

@Suite struct MessageCodecRoundTripTests {
    @Test(arguments: Samples.messages)
    func everyMessageDecodesToItself(message: Message) throws {
        let bytes = MessageCodec.encode(message)
        #expect(try decodeAll(bytes) == [message])
    }

    @Test(arguments: Samples.messages)
    func reEncodingADecodedMessageGivesTheSameBytes(message: Message) throws {
        let bytes = MessageCodec.encode(message)
        let decoded = try decodeAll(bytes)
        #expect(decoded.count == 1)
        #expect(MessageCodec.encode(decoded[0]) == bytes)
    }

    @Test func theHeaderCountsTheTypeByteAndThePayload() {
        let bytes = MessageCodec.encode(.ping(7))
        #expect(bytes == [0, 0, 0, 2, MessageType.ping.rawValue, 7])
        #expect(Frame(type: MessageType.ping.rawValue, payload: [7]).encoded() == bytes)
    }

    @Test func aHelloStartsWithTheMagicAndTheProtocolVersion() {
        let bytes = MessageCodec.encode(
            .hello(
                Hello(
                    replica: Samples.alice, role: .peer, name: "", nonce: Samples.nonce, versionVector: Samples.vector))
        )
        #expect(bytes[4] == MessageType.hello.rawValue)
        #expect(Array(bytes[5..<9]) == Array("WEFT".utf8))
        #expect(UInt16(bytes[9]) << 8 | UInt16(bytes[10]) == SyncLimits.protocolVersion)
    }

    @Test func aLongErrorMessageIsCutAtACharacterBoundary() throws {
        let long = String(repeating: "é", count: SyncLimits.errorMessageBytesMax)
        let decoded = try decodeAll(MessageCodec.encode(.error(SyncError(.shutdown, long))))
        guard case .error(let error) = decoded.first else {
            Issue.record("expected an error message")
            return
        }
        #expect(error.message.utf8.count <= SyncLimits.errorMessageBytesMax)
        #expect(error.message.utf8.count >= SyncLimits.errorMessageBytesMax - 1)
        #expect(error.message.allSatisfy { $0 == "é" })
        #expect(error.raisedByPeer)
    }

    @Test func severalMessagesInOneBufferDecodeInOrder() throws {
        let bytes = Samples.messages.flatMap(MessageCodec.encode)
        #expect(try decodeAll(bytes) == Samples.messages)
    }

    @Test func errorCodesPrintTheirNames() {
        #expect(SyncErrorCode.authenticationFailed.description == "authenticationFailed")
        #expect(SyncErrorCode(rawValue: 999).description == "error 999")
        #expect(SyncError(.timeout, "late", raisedByPeer: true).description == "peer reported timeout: late")
    }
}
