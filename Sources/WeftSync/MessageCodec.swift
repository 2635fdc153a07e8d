import WeftCore

/// Encodes messages into frames and decodes frames into messages. Layouts are in `Docs/PROTOCOL.md`.
///
/// Decoding checks every count and length against ``SyncLimits`` and the bytes left before
/// allocating, validates keys, paths and values with WeftCore's rules, and rejects trailing bytes.
///
/// ```swift
/// let bytes = MessageCodec.encode(.ack(Acknowledgement(versionVector: vv)))
/// var decoder = FrameDecoder()
/// decoder.append(bytes)
/// try MessageCodec.decode(decoder.nextFrame()!)   // .ack(…)
/// ```
public enum MessageCodec {
    /// The four bytes that open every hello: `WEFT`.
    public static let magic: [UInt8] = Array("WEFT".utf8)

    /// The frame (header included) that carries `message`.
    public static func encode(_ message: Message) -> [UInt8] {
        guard let frame = encodeIfFits(message) else { preconditionFailure("an outgoing frame exceeds frameBytesMax") }
        return frame
    }

    /// The frame of `message`, or nil when it would exceed ``SyncLimits/frameBytesMax`` (a client's
    /// reply or event, whose size is the size of the value it carries).
    static func encodeIfFits(_ message: Message) -> [UInt8]? {
        var builder = FrameBuilder(message.type)
        writePayload(of: message, to: &builder.writer)
        return builder.finishIfFits()
    }

    /// The message a frame carries.
    ///
    /// - Throws: ``SyncError`` with code ``SyncErrorCode/unknownMessage`` for an unknown type byte,
    ///   ``SyncErrorCode/unsupportedVersion`` for a hello of another protocol version, and
    ///   ``SyncErrorCode/malformedFrame`` for anything else that does not parse.
    public static func decode(_ frame: Frame) throws(SyncError) -> Message {
        var paths: PathCache?
        return try decode(frame, paths: &paths)
    }

    /// The message a frame carries, decoding ops' paths through `paths` (a cache kept across the frames
    /// of one peer), when there is one.
    ///
    /// - Throws: as ``decode(_:)``.
    public static func decode(_ frame: Frame, paths: inout PathCache?) throws(SyncError) -> Message {
        guard let type = MessageType(rawValue: frame.type) else {
            throw SyncError(.unknownMessage, "unknown frame type \(frame.type)")
        }
        var reader = ByteReader(frame.payload)
        reader.paths = paths.take()
        defer { paths = reader.paths.take() }
        let message = try readPayload(type, from: &reader)
        guard reader.isAtEnd else {
            throw SyncError(.malformedFrame, "\(reader.remaining) trailing bytes after a \(type) message")
        }
        return message
    }

    // MARK: - Encoding

    static func writePayload(of message: Message, to writer: inout ByteWriter) {
        switch message {
        case .hello(let hello): write(hello, to: &writer)
        case .authResponse(let proof), .welcome(let proof): writer.write(raw: proof.bytes)
        case .ops(let ops), .revisions(let ops):
            precondition(!ops.isEmpty, "an ops message carries at least one op")
            for encoding in ops.encodings { writer.write(raw: encoding) }
        case .ack(let ack):
            OpCodec.write(ack.versionVector, to: &writer)
            OpCodec.write(ack.stableFrontier, to: &writer)
            writeOptional(ack.compactionStamp, to: &writer)
        case .snapshotBegin(let begin):
            OpCodec.write(begin.frontier, to: &writer)
            writeOptional(begin.stampFrontier, to: &writer)
            writer.write(varint: begin.entryCount)
            writer.write(varint: begin.byteCount)
            writer.write(varint: begin.touchCount)
        case .snapshotChunk(let entries):
            precondition(!entries.isEmpty, "a snapshot chunk carries at least one entry")
            writer.write(varint: UInt64(entries.count))
            for entry in entries { SnapshotChunker.write(entry, to: &writer) }
        case .snapshotTouches(let touches):
            precondition(!touches.isEmpty, "a touch frame carries at least one touch")
            writer.write(varint: UInt64(touches.count))
            for touch in touches { SnapshotChunker.write(touch, to: &writer) }
        case .snapshotEnd(let digest): writer.write(fixed: digest.rawValue)
        case .snapshotAck(let count): writer.write(varint: count)
        case .ping(let number), .pong(let number): writer.write(varint: number)
        case .error(let error):
            write(code: error.code, to: &writer)
            writer.write(string: truncated(error.message, bytesMax: SyncLimits.errorMessageBytesMax))
        case .request(let request): ClientCodec.write(request, to: &writer)
        case .reply(let reply): ClientCodec.write(reply, to: &writer)
        case .event(let event): ClientCodec.write(event, to: &writer)
        case .queryEvent(let event): ClientCodec.write(event, to: &writer)
        }
    }

    static func write(_ hello: Hello, to writer: inout ByteWriter) {
        writer.write(raw: magic)
        writer.write(byte: UInt8(truncatingIfNeeded: hello.protocolVersion >> 8))
        writer.write(byte: UInt8(truncatingIfNeeded: hello.protocolVersion))
        writer.write(fixed: hello.replica.rawValue)
        writer.write(byte: hello.role.rawValue)
        writer.write(string: hello.name)
        writer.write(raw: hello.nonce.bytes)
        writer.write(varint: hello.windowBytes)
        OpCodec.write(hello.versionVector, to: &writer)
        writeOptional(hello.compactionStamp, to: &writer)
        writer.write(byte: hello.holdsShare ? 1 : 0)
    }

    static func write(code: SyncErrorCode, to writer: inout ByteWriter) {
        writer.write(byte: UInt8(truncatingIfNeeded: code.rawValue >> 8))
        writer.write(byte: UInt8(truncatingIfNeeded: code.rawValue))
    }

    /// The longest prefix of `text` that fits `bytesMax` UTF-8 bytes without splitting a character.
    static func truncated(_ text: String, bytesMax: Int) -> String {
        guard text.utf8.count > bytesMax else { return text }
        var result = ""
        var count = 0
        for character in text {
            let size = character.utf8.count
            guard count + size <= bytesMax else { break }
            result.append(character)
            count += size
        }
        return result
    }

    // MARK: - Decoding

    static func readPayload(_ type: MessageType, from reader: inout ByteReader) throws(SyncError) -> Message {
        switch type {
        case .hello: return .hello(try readHello(from: &reader))
        case .authResponse: return .authResponse(try readProof(from: &reader))
        case .welcome: return .welcome(try readProof(from: &reader))
        case .ops: return .ops(try readOps(from: &reader))
        case .revisions: return .revisions(try readOps(from: &reader))
        case .ack:
            return try decoding("ack") {
                let versionVector = try OpCodec.readVersionVector(from: &reader)
                let stable = try OpCodec.readVersionVector(from: &reader)
                let compaction = try readOptionalStamp(from: &reader, in: "an ack")
                return .ack(
                    Acknowledgement(versionVector: versionVector, stableFrontier: stable, compactionStamp: compaction))
            }
        case .snapshotBegin:
            return try decoding("snapshot begin") {
                let frontier = try OpCodec.readVersionVector(from: &reader)
                let stampFrontier = try readOptionalStamp(from: &reader, in: "a snapshot begin")
                let entryCount = try reader.readVarint()
                let byteCount = try reader.readVarint()
                let touchCount = try reader.readVarint()
                return .snapshotBegin(
                    SnapshotBegin(
                        frontier: frontier, stampFrontier: stampFrontier, entryCount: entryCount,
                        byteCount: byteCount, touchCount: touchCount))
            }
        case .snapshotChunk: return .snapshotChunk(try SnapshotChunker.readChunk(from: &reader))
        case .snapshotTouches: return .snapshotTouches(try SnapshotChunker.readTouches(from: &reader))
        case .snapshotEnd:
            return .snapshotEnd(StateDigest(rawValue: try decoding("snapshot end") { try reader.readFixed() }))
        case .snapshotAck: return .snapshotAck(chunkCount: try decoding("snapshot ack") { try reader.readVarint() })
        case .ping: return .ping(try decoding("ping") { try reader.readVarint() })
        case .pong: return .pong(try decoding("pong") { try reader.readVarint() })
        case .error:
            return try decoding("error") {
                let code = try readCode(from: &reader)
                let message = try reader.readString(max: SyncLimits.errorMessageBytesMax)
                return .error(SyncError(code, message, raisedByPeer: true))
            }
        case .request: return .request(try ClientCodec.readRequest(from: &reader))
        case .reply: return .reply(try ClientCodec.readReply(from: &reader))
        case .event: return .event(try ClientCodec.readEvent(from: &reader))
        case .queryEvent: return .queryEvent(try ClientCodec.readQueryEvent(from: &reader))
        }
    }

    /// A flag byte, then the stamp when the flag is 1.
    static func writeOptional(_ stamp: Stamp?, to writer: inout ByteWriter) {
        guard let stamp else { return writer.write(byte: 0) }
        writer.write(byte: 1)
        OpCodec.write(stamp, to: &writer)
    }

    /// Reads what ``writeOptional(_:to:)`` wrote; a flag other than 0 or 1 is malformed.
    static func readOptionalStamp(from reader: inout ByteReader, in what: String) throws -> Stamp? {
        switch try reader.readByte() {
        case 0: return nil
        case 1: return try OpCodec.readStamp(from: &reader)
        case let flag: throw SyncError(.malformedFrame, "\(what) has stamp flag \(flag), not 0 or 1")
        }
    }

    /// Runs a core decoding step, turning its errors into ``SyncErrorCode/malformedFrame``.
    static func decoding<T>(_ what: String, _ body: () throws -> T) throws(SyncError) -> T {
        do {
            return try body()
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError.malformed("malformed \(what)", error)
        }
    }

    static func readHello(from reader: inout ByteReader) throws(SyncError) -> Hello {
        let version: UInt16 = try decoding("hello") {
            guard reader.remaining >= magic.count + 2 else {
                throw SyncError(.malformedFrame, "a hello is too short to hold its magic and version")
            }
            for expected in magic {
                guard try reader.readByte() == expected else {
                    throw SyncError(.malformedFrame, "a hello must start with the bytes WEFT")
                }
            }
            return UInt16(try reader.readByte()) << 8 | UInt16(try reader.readByte())
        }
        guard version == SyncLimits.protocolVersion else {
            throw SyncError(
                .unsupportedVersion,
                "protocol version \(version) is not supported; this replica speaks version \(SyncLimits.protocolVersion)"
            )
        }
        return try decoding("hello") {
            guard let replica = ReplicaID(rawValue: try reader.readFixed()) else {
                throw SyncError(.malformedFrame, "a hello names replica id 0")
            }
            let roleByte = try reader.readByte()
            guard let role = SyncRole(rawValue: roleByte) else {
                throw SyncError(.malformedFrame, "unknown role \(roleByte) in a hello")
            }
            let name = try reader.readString(max: SyncLimits.nameBytesMax)
            guard reader.remaining >= SyncLimits.nonceBytes else {
                throw SyncError(.malformedFrame, "a hello ends inside its nonce")
            }
            var nonceBytes: [UInt8] = []
            nonceBytes.reserveCapacity(SyncLimits.nonceBytes)
            for _ in 0..<SyncLimits.nonceBytes { nonceBytes.append(try reader.readByte()) }
            let windowBytes = try reader.readVarint()
            guard windowBytes >= UInt64(SyncLimits.windowBytesMin) else {
                throw SyncError(.malformedFrame, "a receive window of \(windowBytes) bytes is below the minimum")
            }
            let versionVector = try OpCodec.readVersionVector(from: &reader)
            let compactionStamp = try readOptionalStamp(from: &reader, in: "a hello")
            let share = try reader.readByte()
            guard share <= 1 else {
                throw SyncError(.malformedFrame, "a hello's share flag is \(share); it must be 0 or 1")
            }
            return Hello(
                protocolVersion: version, replica: replica, role: role, name: name,
                nonce: AuthNonce(bytes: nonceBytes)!, versionVector: versionVector, windowBytes: windowBytes,
                compactionStamp: compactionStamp, holdsShare: share == 1)
        }
    }

    static func readProof(from reader: inout ByteReader) throws(SyncError) -> AuthProof {
        guard reader.remaining == SyncLimits.proofBytes else {
            throw SyncError(.malformedFrame, "a proof holds \(SyncLimits.proofBytes) bytes, not \(reader.remaining)")
        }
        return try decoding("proof") {
            var bytes: [UInt8] = []
            for _ in 0..<SyncLimits.proofBytes { bytes.append(try reader.readByte()) }
            return AuthProof(bytes: bytes)!
        }
    }

    /// The ops of an ops message, each with the bytes it came in (the store keeps them).
    static func readOps(from reader: inout ByteReader) throws(SyncError) -> EncodedOps {
        guard !reader.isAtEnd else { throw SyncError(.malformedFrame, "an ops message carries no op") }
        return try decoding("op") { try EncodedOps.read(from: &reader, countMax: SyncLimits.batchOpsMax) }
    }

    static func readCode(from reader: inout ByteReader) throws -> SyncErrorCode {
        SyncErrorCode(rawValue: UInt16(try reader.readByte()) << 8 | UInt16(try reader.readByte()))
    }
}
