import Foundation
import Testing
import WeftCore
@testable import WeftSync

extension Samples {
    static var posts: Query {
        try! Query(path: path("/posts")).orderedByChild("meta/score").starting(at: .int(10), key: "p1")
            .where(QueryField("status") == .string("open") && !QueryField("hidden").exists).limit(toLast: 20)
    }

    static var rows: QueryResult {
        [
            QueryRow(key: Key(unchecked: "p1"), value: tree),
            QueryRow(key: Key(unchecked: "p2"), value: .int(3)),
        ]
    }

    /// The query requests, a rows reply and a live query event, added to ``messages``.
    static var queryMessages: [Message] {
        let event = ClientQueryEvent(
            watchID: 9, from: rows, to: [QueryRow(key: Key(unchecked: "p3"), value: .bool(true)), rows[0]])
        return [
            .request(ClientRequest(id: 8, command: .query(posts))),
            .request(ClientRequest(id: 9, command: .watchQuery(try! Query(path: path("/")).orderedByValue()))),
            .reply(ClientReply(id: 8, result: .rows(rows))),
            .reply(ClientReply(id: 9, result: .rows([]))),
            .queryEvent(event),
        ]
    }
}

@Suite struct ClientQueryCodecTests {
    static func row(_ key: String, _ value: Int) -> QueryRow { QueryRow(key: Key(unchecked: key), value: .int(Int64(value))) }

    /// A result of up to 12 rows drawn from 16 keys with small values, in a random order.
    static func randomResult(_ generator: inout SeededGenerator) -> QueryResult {
        var keys = (0..<16).map { "k\($0)" }
        keys.shuffle(using: &generator)
        let count = Int(generator.below(13))
        return QueryResult(rows: keys.prefix(count).map { row($0, Int(generator.below(3))) })
    }

    static func roundTrip(_ event: ClientQueryEvent) throws -> ClientQueryEvent {
        let decoded = try decodeAll(MessageCodec.encode(.queryEvent(event)))
        guard case .queryEvent(let back)? = decoded.first, decoded.count == 1 else {
            throw SyncError(.malformedFrame, "expected one query event, got \(decoded)")
        }
        return back
    }

    @Test("a live query event rebuilds the new result from the old one after a trip over the wire, 600 cases")
    func eventsRebuildTheNewResult() throws {
        var generator = SeededGenerator(seed: 37)
        for _ in 0..<600 {
            let old = Self.randomResult(&generator)
            let new = Self.randomResult(&generator)
            let event = try Self.roundTrip(ClientQueryEvent(watchID: 5, from: old, to: new))
            #expect(try event.applied(to: old) == new, "\(old) → \(new): \(event.changes)")
        }
    }

    @Test("an event carries only the rows the change set names, not those that stayed unchanged in place")
    func eventsCarryOnlyNamedRows() throws {
        let old: QueryResult = [Self.row("a", 1), Self.row("b", 1), Self.row("c", 1), Self.row("d", 1)]
        let new: QueryResult = [Self.row("a", 1), Self.row("b", 2), Self.row("d", 1), Self.row("e", 1)]
        let event = ClientQueryEvent(watchID: 1, from: old, to: new)
        #expect(event.rows.map(\.index) == [1, 3])
        #expect(event.rows.map(\.row.key.text) == ["b", "e"])
        #expect(try event.applied(to: old) == new)
    }

    @Test("an event that does not fit the result held is refused as a protocol violation, never a crash")
    func mismatchedEventsAreRefused() throws {
        let old: QueryResult = [Self.row("a", 1), Self.row("b", 1)]
        let new: QueryResult = [Self.row("b", 1), Self.row("c", 1), Self.row("a", 1)]
        let event = ClientQueryEvent(watchID: 2, from: old, to: new)
        var missing = event
        missing.rows = []
        let broken = [
            ClientQueryEvent(
                watchID: 2, changes: QueryChangeSet(deletions: [7], insertions: [], modifications: [], moves: []),
                rows: []),
            ClientQueryEvent(
                watchID: 2, changes: QueryChangeSet(deletions: [0], insertions: [], modifications: [0], moves: []),
                rows: []),
            missing,
        ]
        for candidate in broken {
            #expect(throws: SyncError.self) { try candidate.applied(to: old) }
        }
        // The same event on a result the client does not hold.
        #expect(throws: SyncError.self) { try event.applied(to: [Self.row("a", 1)]) }
        #expect(try event.applied(to: old) == new)
    }

    @Test("a query event whose row indexes go backwards is a malformed frame")
    func rowIndexesMustAscend() {
        var writer = ByteWriter(capacity: 64)
        writer.write(varint: 1)
        QueryCodec.write(QueryChangeSet(deletions: [], insertions: [0, 1], modifications: [], moves: []), to: &writer)
        writer.write(varint: 2)
        for index in [1, 0] {
            writer.write(varint: UInt64(index))
            writer.write(string: "k\(index)")
            OpCodec.write(.int(1), to: &writer)
        }
        let frame = Frame(type: MessageType.queryEvent.rawValue, payload: writer.bytes)
        #expect(throws: SyncError.self) { try MessageCodec.decode(frame) }
    }

    @Test("a query request whose query breaks a rule is a malformed frame, not a query")
    func invalidQueriesAreRefused() throws {
        var query = MessageCodec.encode(.request(ClientRequest(id: 1, command: .query(Samples.posts))))
        // The limit is the query's last varint (20): make it 0.
        let limitIndex = try #require(query.lastIndex(of: 20))
        query[limitIndex] = 0
        #expect(throws: SyncError.self) { try decodeAll(query) }
    }

    @Test("a rows reply and an initial live query larger than a frame fail the request; the session goes on")
    func largeResultsFailWithLimitExceeded() {
        var harness = SyncSessionClientTests().connectedClient()
        let big = Value.string(String(repeating: "q", count: 9 << 20))
        let rows: QueryResult = [QueryRow(key: Key(unchecked: "a"), value: big), QueryRow(key: Key(unchecked: "b"), value: big)]
        let query = Query(path: Samples.path("/posts"))
        for (id, command) in [(UInt64(1), ClientCommand.query(query)), (2, .watchQuery(query))] {
            harness.perform(
                try! harness.endpoints[0].session.onClientRequest(ClientRequest(id: id, command: command), now: harness.now),
                at: 0)
            harness.run()
            harness.perform(
                harness.endpoints[1].session.onClientReply(ClientReply(id: id, result: .rows(rows)), now: harness.now),
                at: 1)
            harness.run()
        }
        let codes = harness.endpoints[0].replies.map { reply -> SyncErrorCode? in
            if case .failed(let error) = reply.result { return error.code }
            return nil
        }
        #expect(codes == [.limitExceeded, .limitExceeded])
        #expect(harness.endpoints[1].session.phase == .connected)
        // The live query that failed sends nothing.
        let sentBefore = harness.endpoints[1].messagesSent.count
        harness.perform(
            harness.endpoints[1].session.onClientQueryEvent(
                ClientQueryEvent(watchID: 2, from: [], to: [QueryRow(key: Key(unchecked: "c"), value: .int(1))]),
                now: harness.now), at: 1)
        harness.run()
        #expect(harness.endpoints[1].messagesSent.count == sentBefore)
    }

    @Test("live query events reach the client until it unwatches")
    func liveQueryEventsFlowUntilUnwatched() {
        var harness = SyncSessionClientTests().connectedClient()
        let query = try! Query(path: Samples.path("/posts")).orderedByValue()
        let send = { (harness: inout Harness, request: ClientRequest) in
            harness.perform(try! harness.endpoints[0].session.onClientRequest(request, now: harness.now), at: 0)
            harness.run()
            harness.perform(
                harness.endpoints[1].session.onClientReply(
                    ClientReply(id: request.id, result: request.id == 4 ? .rows([]) : .ok(.null)), now: harness.now),
                at: 1)
            harness.run()
        }
        send(&harness, ClientRequest(id: 4, command: .watchQuery(query)))
        let event = ClientQueryEvent(watchID: 4, from: [], to: [Self.row("x", 1)])
        harness.perform(harness.endpoints[1].session.onClientQueryEvent(event, now: harness.now), at: 1)
        harness.run()
        #expect(harness.endpoints[0].queryEvents == [event])
        send(&harness, ClientRequest(id: 5, command: .unwatch(watchID: 4)))
        harness.perform(harness.endpoints[1].session.onClientQueryEvent(event, now: harness.now), at: 1)
        harness.run()
        #expect(harness.endpoints[0].queryEvents == [event])
    }
}

extension SyncSessionPermissionTests {
    @Test("a query or live query of a node the client may not read is refused without reaching the owner")
    func queriesNeedReadAccessToTheirNode() {
        let permissions = PathPermissions([try! Path("/public"): .read])
        var harness = connect(role: .client, permissions: permissions)
        let requests = [
            ClientRequest(id: 1, command: .query(Query(path: try! Path("/private")))),
            ClientRequest(id: 2, command: .watchQuery(Query(path: try! Path("/private")))),
            ClientRequest(id: 3, command: .query(Query(path: try! Path("/public/posts")))),
            ClientRequest(id: 4, command: .query(Query(path: .root))),
        ]
        for request in requests {
            harness.perform(try! harness.endpoints[0].session.onClientRequest(request, now: harness.now), at: 0)
        }
        harness.run()
        #expect(harness.endpoints[1].requests.map(\.id) == [3])
        #expect(harness.endpoints[0].replies.map(\.id) == [1, 2, 4])
        #expect(
            harness.endpoints[0].replies.first?.result
                == .failed(SyncError(.permissionDenied, "no read access to /private", raisedByPeer: true)))
    }
}
