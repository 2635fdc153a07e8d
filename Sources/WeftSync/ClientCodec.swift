import WeftCore

/// The payload layouts of the client messages (request, reply, event); see `Docs/PROTOCOL.md`.
enum ClientCodec {
    enum CommandTag: UInt8 {
        case get = 1, set, merge, push, increment, watch, unwatch, status, query, watchQuery, subscribe, subscriptions
    }

    enum ResultTag: UInt8 {
        case ok = 1, failed, rows
    }

    // MARK: - Requests

    static func write(_ request: ClientRequest, to writer: inout ByteWriter) {
        writer.write(varint: request.id)
        switch request.command {
        case .get(let path):
            writer.write(byte: CommandTag.get.rawValue)
            OpCodec.write(path, to: &writer)
        case .set(let path, let value):
            writer.write(byte: CommandTag.set.rawValue)
            OpCodec.write(path, to: &writer)
            OpCodec.write(value, to: &writer)
        case .merge(let path, let children):
            writer.write(byte: CommandTag.merge.rawValue)
            OpCodec.write(path, to: &writer)
            writer.write(varint: UInt64(children.count))
            for child in children {
                OpCodec.write(child.relative, to: &writer)
                OpCodec.write(child.value, to: &writer)
            }
        case .push(let path, let value):
            writer.write(byte: CommandTag.push.rawValue)
            OpCodec.write(path, to: &writer)
            OpCodec.write(value, to: &writer)
        case .increment(let path, let by, let from):
            writer.write(byte: CommandTag.increment.rawValue)
            OpCodec.write(path, to: &writer)
            OpCodec.write(by.value, to: &writer)
            OpCodec.write(from.value, to: &writer)
        case .watch(let path):
            writer.write(byte: CommandTag.watch.rawValue)
            OpCodec.write(path, to: &writer)
        case .unwatch(let watchID):
            writer.write(byte: CommandTag.unwatch.rawValue)
            writer.write(varint: watchID)
        case .status:
            writer.write(byte: CommandTag.status.rawValue)
        case .query(let query):
            writer.write(byte: CommandTag.query.rawValue)
            QueryCodec.write(query, to: &writer)
        case .watchQuery(let query):
            writer.write(byte: CommandTag.watchQuery.rawValue)
            QueryCodec.write(query, to: &writer)
        case .subscribe(let subscription):
            writer.write(byte: CommandTag.subscribe.rawValue)
            write(subscription, to: &writer)
        case .subscriptions:
            writer.write(byte: CommandTag.subscriptions.rawValue)
        }
    }

    /// A subscription request: action, flags (bit 0: values), path, target kind, then its strings, and for
    /// ``SubscriptionRequest/Action/updateDeviceToken`` the new device token.
    static func write(_ request: SubscriptionRequest, to writer: inout ByteWriter) {
        writer.write(byte: request.action.rawValue)
        writer.write(byte: request.includesValue ? 1 : 0)
        OpCodec.write(request.path, to: &writer)
        switch request.target {
        case .webhook(let identifier, let context):
            writer.write(byte: 1)
            OpCodec.write(Value.string(identifier), to: &writer)
            OpCodec.write(Value.string(context), to: &writer)
        case .notifications(let deviceToken):
            writer.write(byte: 2)
            OpCodec.write(Value.string(deviceToken), to: &writer)
        }
        if request.action == .updateDeviceToken { OpCodec.write(Value.string(request.newDeviceToken), to: &writer) }
    }

    static func readSubscription(from reader: inout ByteReader) throws -> SubscriptionRequest {
        let actionByte = try reader.readByte()
        guard let action = SubscriptionRequest.Action(rawValue: actionByte) else {
            throw SyncError(.malformedFrame, "unknown subscription action \(actionByte)")
        }
        let flags = try reader.readByte()
        guard flags <= 1 else { throw SyncError(.malformedFrame, "unknown subscription flags \(flags)") }
        let path = try OpCodec.readPath(from: &reader)
        func string() throws -> String {
            guard case .string(let text) = try OpCodec.readValue(from: &reader, depth: 0) else {
                throw SyncError(.malformedFrame, "a subscription field is not a string")
            }
            return text
        }
        let target: SubscriptionTarget
        switch try reader.readByte() {
        case 1: target = .webhook(identifier: try string(), context: try string())
        case 2: target = .notifications(deviceToken: try string())
        case let kind: throw SyncError(.malformedFrame, "unknown subscription target \(kind)")
        }
        let newDeviceToken = action == .updateDeviceToken ? try string() : ""
        return SubscriptionRequest(
            action: action, path: path, target: target, includesValue: flags == 1, newDeviceToken: newDeviceToken)
    }

    static func readRequest(from reader: inout ByteReader) throws(SyncError) -> ClientRequest {
        try MessageCodec.decoding("request") {
            let id = try reader.readVarint()
            let tagByte = try reader.readByte()
            guard let tag = CommandTag(rawValue: tagByte) else {
                throw SyncError(.malformedFrame, "unknown client command \(tagByte)")
            }
            return ClientRequest(id: id, command: try readCommand(tag, from: &reader))
        }
    }

    static func readCommand(_ tag: CommandTag, from reader: inout ByteReader) throws -> ClientCommand {
        if tag == .unwatch { return .unwatch(watchID: try reader.readVarint()) }
        if tag == .status { return .status }
        if tag == .subscriptions { return .subscriptions }
        if tag == .subscribe { return .subscribe(try readSubscription(from: &reader)) }
        if tag == .query || tag == .watchQuery { return try readQueryCommand(tag, from: &reader) }
        let path = try OpCodec.readPath(from: &reader)
        switch tag {
        case .get: return .get(path)
        case .set: return .set(path, try OpCodec.readValue(from: &reader, depth: path.depth))
        case .merge: return .merge(path, try readChildren(below: path, from: &reader))
        case .push:
            guard path.depth < CoreLimits.pathDepthMax else {
                throw SyncError(.malformedFrame, "a push at depth \(path.depth) would exceed the depth limit")
            }
            return .push(path, try OpCodec.readValue(from: &reader, depth: path.depth + 1))
        case .increment:
            return .increment(path, by: try readNumber(from: &reader), from: try readNumber(from: &reader))
        case .watch: return .watch(path)
        case .unwatch, .status, .query, .watchQuery, .subscribe, .subscriptions: preconditionFailure("\(tag) is decoded above")
        }
    }

    static func readChildren(below path: Path, from reader: inout ByteReader) throws -> [MergeChild] {
        let count = try reader.readCount(max: CoreLimits.batchPartsMax, minimumBytes: 2)
        var children: [MergeChild] = []
        children.reserveCapacity(count)
        for _ in 0..<count {
            let relative = try OpCodec.readPath(from: &reader)
            guard path.depth + relative.depth <= CoreLimits.pathDepthMax else {
                throw SyncError(.malformedFrame, "a merge child path is too deep")
            }
            let value = try OpCodec.readValue(from: &reader, depth: path.depth + relative.depth)
            children.append(MergeChild(relative: relative, value: value))
        }
        return try MergeChild.validated(children)
    }

    static func readNumber(from reader: inout ByteReader) throws -> Number {
        guard let number = Number(try OpCodec.readValue(from: &reader, depth: 0)) else {
            throw SyncError(.malformedFrame, "an increment expects a number")
        }
        return number
    }

    // MARK: - Replies and events

    static func write(_ reply: ClientReply, to writer: inout ByteWriter) {
        writer.write(varint: reply.id)
        switch reply.result {
        case .ok(let value):
            writer.write(byte: ResultTag.ok.rawValue)
            OpCodec.write(value, to: &writer)
        case .rows(let result):
            writer.write(byte: ResultTag.rows.rawValue)
            QueryCodec.write(result, to: &writer)
        case .failed(let error):
            writer.write(byte: ResultTag.failed.rawValue)
            MessageCodec.write(code: error.code, to: &writer)
            writer.write(string: MessageCodec.truncated(error.message, bytesMax: SyncLimits.errorMessageBytesMax))
        }
    }

    static func readReply(from reader: inout ByteReader) throws(SyncError) -> ClientReply {
        try MessageCodec.decoding("reply") {
            let id = try reader.readVarint()
            let tagByte = try reader.readByte()
            switch ResultTag(rawValue: tagByte) {
            case .ok: return ClientReply(id: id, result: .ok(try OpCodec.readValue(from: &reader, depth: 0)))
            case .rows: return ClientReply(id: id, result: .rows(try QueryCodec.readResult(from: &reader, depth: 0)))
            case .failed:
                let code = try MessageCodec.readCode(from: &reader)
                let message = try reader.readString(max: SyncLimits.errorMessageBytesMax)
                return ClientReply(id: id, result: .failed(SyncError(code, message, raisedByPeer: true)))
            case nil: throw SyncError(.malformedFrame, "unknown reply result \(tagByte)")
            }
        }
    }

    static func write(_ event: ClientEvent, to writer: inout ByteWriter) {
        writer.write(varint: event.watchID)
        OpCodec.write(event.path, to: &writer)
        OpCodec.write(event.value, to: &writer)
    }

    static func readEvent(from reader: inout ByteReader) throws(SyncError) -> ClientEvent {
        try MessageCodec.decoding("event") {
            let watchID = try reader.readVarint()
            let path = try OpCodec.readPath(from: &reader)
            return ClientEvent(
                watchID: watchID, path: path, value: try OpCodec.readValue(from: &reader, depth: path.depth))
        }
    }

    // MARK: - Queries

    static func readQueryCommand(_ tag: CommandTag, from reader: inout ByteReader) throws -> ClientCommand {
        let query = try QueryCodec.readQuery(from: &reader)
        return tag == .query ? .query(query) : .watchQuery(query)
    }

    /// A live query's event: its watch id, the change set, then the rows it names (index, key, value).
    static func write(_ event: ClientQueryEvent, to writer: inout ByteWriter) {
        writer.write(varint: event.watchID)
        QueryCodec.write(event.changes, to: &writer)
        writer.write(varint: UInt64(event.rows.count))
        for row in event.rows {
            writer.write(varint: UInt64(row.index))
            writer.write(string: row.row.key.text)
            OpCodec.write(row.row.value, to: &writer)
        }
    }

    static func readQueryEvent(from reader: inout ByteReader) throws(SyncError) -> ClientQueryEvent {
        try MessageCodec.decoding("query event") {
            let watchID = try reader.readVarint()
            let changes = try QueryCodec.readChangeSet(from: &reader)
            let count = try reader.readCount(max: CoreLimits.queryLimitMax, minimumBytes: 4)
            var rows: [ClientQueryEvent.Row] = []
            rows.reserveCapacity(count)
            for _ in 0..<count {
                let index = try reader.readVarint()
                guard index < UInt64(CoreLimits.queryLimitMax), rows.last.map({ UInt64($0.index) < index }) ?? true
                else {
                    throw SyncError(.malformedFrame, "a query event row index \(index) is out of order or range")
                }
                let key = try Key(validating: reader.readString(max: CoreLimits.keyBytesMax))
                let value = try OpCodec.readValue(from: &reader, depth: 1)
                guard !value.isNull else { throw SyncError(.malformedFrame, "a query event row \(key) is null") }
                rows.append(ClientQueryEvent.Row(index: Int(index), row: QueryRow(key: key, value: value)))
            }
            return ClientQueryEvent(watchID: watchID, changes: changes, rows: rows)
        }
    }
}
