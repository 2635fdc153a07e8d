import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real `weft serve --http` talked to over loopback with URLSession (and raw sockets for event streams).
@Suite(.serialized, .timeLimit(.minutes(5))) struct HTTPRESTIntegrationTests {
    static let adminToken = DaemonIntegrationTests.clientToken
    static let aliceToken = "alice's http secret, long enough for a token"

    /// An HTTP reply.
    struct Reply {
        let status: Int
        let headers: [String: String]
        let body: String

        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    /// A daemon with HTTP on, its HTTP port, and the admin and alice clients.
    struct Server: @unchecked Sendable {  // its daemon is only stopped once the test ends
        let daemon: Daemon
        let httpPort: Int

        init(_ scratch: Scratch, name: String = "hub", peers: [Int] = [], extraTokens: [String] = [], options: [String] = [])
            async throws
        {
            let lines = ["client \(HTTPRESTIntegrationTests.adminToken)", "alice \(HTTPRESTIntegrationTests.aliceToken)"]
                + extraTokens
            let tokens = try scratch.write("tokens-\(name)", lines.joined(separator: "\n") + "\n")
            let rules = try scratch.write(
                "rules-\(name)", "client alice readwrite /users/$name/**\nclient alice read /public/**\n")
            daemon = try await Daemon(
                database: scratch.file("\(name).sqlite"), peers: peers, tokens: tokens, name: name,
                options: ["--rules", rules, "--http", "127.0.0.1:0"] + options)
            let line = try await daemon.nextLine()
            guard line.hasPrefix("http listening 127.0.0.1:"), let port = Int(line.split(separator: ":").last ?? "")
            else { throw WeftBinary.Failure(description: "unexpected second line: \(line)") }
            httpPort = port
        }

        func send(
            _ method: String, _ path: String, body: String? = nil, token: String? = HTTPRESTIntegrationTests.adminToken,
            headers: [String: String] = [:]
        ) async throws -> Reply {
            try await HTTPRESTIntegrationTests.send(
                method, "http://127.0.0.1:\(httpPort)\(path)", body: body.map { Data($0.utf8) }, token: token,
                headers: headers)
        }
    }

    static func send(
        _ method: String, _ url: String, body: Data?, token: String?, headers: [String: String] = [:]
    ) async throws -> Reply {
        guard let url = URL(string: url) else { throw WeftBinary.Failure(description: "bad url \(url)") }
        var request = URLRequest(url: url, timeoutInterval: 20)
        request.httpMethod = method
        request.httpBody = body
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw WeftBinary.Failure(description: "not HTTP") }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name] = value }
        }
        return Reply(status: http.statusCode, headers: fields, body: String(decoding: data, as: UTF8.self))
    }

    @Test func eachMethodRoundTripsAsFirebaseAnswersIt() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let server = try await Server(scratch)
        defer { server.daemon.stop() }

        var reply = try await server.send("PUT", "/rooms/a.json?ns=demo", body: #"{"name":"A","size":3}"#)
        #expect(reply.status == 200)
        #expect(reply.body == #"{"name":"A","size":3}"#)
        reply = try await server.send("GET", "/rooms/a/name.json")
        #expect(reply.status == 200 && reply.body == #""A""#)
        reply = try await server.send("GET", "/rooms.json?print=pretty")
        #expect(reply.body == "{\n  \"a\": {\n    \"name\": \"A\",\n    \"size\": 3\n  }\n}")
        reply = try await server.send("GET", "/nothing.json")
        #expect(reply.status == 200 && reply.body == "null")

        reply = try await server.send("POST", "/chat.json", body: #""hello""#)
        #expect(reply.status == 200)
        let pushed = try #require(reply.body.split(separator: "\"").dropFirst(3).first.map(String.init))
        #expect(pushed.count == 20, "a push id: \(reply.body)")
        reply = try await server.send("GET", "/chat/\(pushed).json")
        #expect(reply.body == #""hello""#)

        // A multi-path PATCH: keys may be deep paths; null deletes; siblings are kept.
        reply = try await server.send("PATCH", "/rooms.json", body: #"{"a/size":4,"b/name":"B","a/name":null}"#)
        #expect(reply.status == 200)
        #expect(reply.body == #"{"a/size":4,"b/name":"B","a/name":null}"#)
        reply = try await server.send("GET", "/rooms.json")
        #expect(reply.body == #"{"a":{"size":4},"b":{"name":"B"}}"#)
        reply = try await server.send("GET", "/rooms.json?shallow=true")
        #expect(reply.body == #"{"a":true,"b":true}"#)

        reply = try await server.send("PUT", "/quiet.json?print=silent", body: "1")
        #expect(reply.status == 204 && reply.body.isEmpty)
        reply = try await server.send("DELETE", "/rooms/b.json")
        #expect(reply.status == 200 && reply.body == "null")
        reply = try await server.send("GET", "/rooms/b.json")
        #expect(reply.body == "null")

        // X-HTTP-Method-Override turns a POST into the named method.
        reply = try await server.send("POST", "/over.json", body: #"{"x":1}"#, headers: ["X-HTTP-Method-Override": "PUT"])
        #expect(reply.status == 200)
        reply = try await server.send("POST", "/over.json", headers: ["X-HTTP-Method-Override": "DELETE"])
        reply = try await server.send("GET", "/over.json")
        #expect(reply.body == "null")
    }

    @Test func serverValuesStampTimeAndIncrementsAddUpExactly() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let server = try await Server(scratch)
        defer { server.daemon.stop() }

        let before = Int64(Date().timeIntervalSince1970 * 1000)
        var reply = try await server.send("PUT", "/seen.json", body: #"{"at":{".sv":"timestamp"}}"#)
        #expect(reply.status == 200)
        let at = try #require(Int64(reply.body.filter(\.isNumber)))
        #expect(at >= before && at <= before + 60_000)

        // Twenty concurrent increments: each a Weft increment op, so none is lost.
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await server.send("PUT", "/count.json", body: #"{".sv":{"increment":2}}"#).status
                }
            }
            for try await status in group { #expect(status == 200) }
        }
        reply = try await server.send("GET", "/count.json")
        #expect(reply.body == "40")
        reply = try await server.send("PATCH", "/stats.json", body: #"{"views":{".sv":{"increment":1}},"name":"s"}"#)
        #expect(reply.status == 200)
        reply = try await server.send("PATCH", "/stats.json", body: #"{"views":{".sv":{"increment":1}}}"#)
        reply = try await server.send("GET", "/stats.json")
        #expect(reply.body == #"{"name":"s","views":2}"#)
        reply = try await server.send("PUT", "/bad.json", body: #"{".sv":"yesterday"}"#)
        #expect(reply.status == 400)
    }

    @Test func queriesOrderFilterAndLimitAsFirebase() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let server = try await Server(scratch)
        defer { server.daemon.stop() }
        let scores = #"{"ann":{"score":5},"bob":{"score":9},"cat":{"score":1},"dan":{"score":7}}"#
        #expect(try await server.send("PUT", "/scores.json", body: scores).status == 200)

        func get(_ query: String) async throws -> Reply {
            try await server.send("GET", "/scores.json?" + query)
        }
        var reply = try await get(#"orderBy=%22score%22&startAt=5"#)
        #expect(reply.body == #"{"ann":{"score":5},"bob":{"score":9},"dan":{"score":7}}"#)
        reply = try await get(#"orderBy=%22score%22&limitToLast=2"#)
        #expect(reply.body == #"{"bob":{"score":9},"dan":{"score":7}}"#)
        reply = try await get(#"orderBy=%22score%22&equalTo=1"#)
        #expect(reply.body == #"{"cat":{"score":1}}"#)
        reply = try await get(#"orderBy=%22$key%22&startAt=%22b%22&endAt=%22c~%22"#)
        #expect(reply.body == #"{"bob":{"score":9},"cat":{"score":1}}"#)
        reply = try await get(#"orderBy=%22$key%22&limitToFirst=1"#)
        #expect(reply.body == #"{"ann":{"score":5}}"#)
        #expect(try await server.send("PUT", "/n.json", body: #"{"a":3,"b":1,"c":2}"#).status == 200)
        reply = try await server.send("GET", #"/n.json?orderBy=%22$value%22&limitToFirst=2"#)
        #expect(reply.body == #"{"b":1,"c":2}"#)

        reply = try await get("limitToFirst=1")
        #expect(reply.status == 400)
        #expect(reply.body == #"{"error":"orderBy must be defined when other query parameters are defined"}"#)
        reply = try await get("orderBy=score")
        #expect(reply.status == 400, "orderBy is JSON-encoded: \(reply.body)")
        reply = try await get(#"orderBy=%22score%22&shallow=true"#)
        #expect(reply.status == 400)
    }

    @Test func anETagRaceHasExactlyOneWinner() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let server = try await Server(scratch)
        defer { server.daemon.stop() }
        #expect(try await server.send("PUT", "/seat.json", body: #""free""#).status == 200)
        let read = try await server.send("GET", "/seat.json", headers: ["X-Firebase-ETag": "true"])
        let etag = try #require(read.header("ETag"))

        async let first = server.send("PUT", "/seat.json", body: #""ann""#, headers: ["if-match": etag])
        async let second = server.send("PUT", "/seat.json", body: #""bob""#, headers: ["if-match": etag])
        let replies = try await [first, second]
        let statuses = replies.map(\.status).sorted()
        #expect(statuses == [200, 412], "\(replies.map(\.body))")
        let winner = try #require(replies.first { $0.status == 200 })
        let loser = try #require(replies.first { $0.status == 412 })
        #expect(loser.body == winner.body, "the 412 carries the current value")
        #expect(loser.header("ETag") == winner.header("ETag"))
        #expect(try await server.send("GET", "/seat.json").body == winner.body)

        // A stale ETag on DELETE changes nothing; the current one deletes.
        let stale = try await server.send("DELETE", "/seat.json", headers: ["if-match": etag])
        #expect(stale.status == 412)
        let current = try #require(loser.header("ETag"))
        #expect(try await server.send("DELETE", "/seat.json", headers: ["if-match": current]).status == 200)
        #expect(try await server.send("GET", "/seat.json").body == "null")
    }

    @Test func withoutAValidTokenOrOutsideItsRulesAClientGets401() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let server = try await Server(scratch)
        defer { server.daemon.stop() }
        var reply = try await server.send("GET", "/.json", token: nil)
        #expect(reply.status == 401 && reply.body.hasPrefix(#"{"error":"#))
        reply = try await server.send("GET", "/.json", token: "a wrong secret, long enough for a token")
        #expect(reply.status == 401)
        reply = try await server.send("GET", "/.json?auth=" + Self.adminToken.replacingOccurrences(of: " ", with: "%20")
            .replacingOccurrences(of: ",", with: "%2C"), token: nil)
        #expect(reply.status == 200, "?auth= works: \(reply.body)")

        // alice writes her subtree, reads /public, and nothing else.
        reply = try await server.send("PUT", "/users/alice/name.json", body: #""Alice""#, token: Self.aliceToken)
        #expect(reply.status == 200)
        reply = try await server.send("PUT", "/users/bob/name.json", body: #""x""#, token: Self.aliceToken)
        #expect(reply.status == 401 && reply.body.contains("no write access to /users/bob/name for alice"))
        reply = try await server.send("GET", "/users.json", token: Self.aliceToken)
        #expect(reply.status == 401)
        reply = try await server.send("PATCH", "/users.json", body: #"{"alice/a":1,"bob/b":2}"#, token: Self.aliceToken)
        #expect(reply.status == 401)
        #expect(try await server.send("GET", "/users/alice/a.json").body == "null", "refused whole")
        reply = try await server.send("GET", "/public.json", token: Self.aliceToken)
        #expect(reply.status == 200)
    }

    @Test func badInputGetsAClearErrorAndTheDaemonKeepsServing() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let server = try await Server(scratch)
        defer { server.daemon.stop() }
        #expect(try await server.send("PUT", "/keep.json", body: "1").status == 200)

        var reply = try await server.send("PUT", "/keep.json", body: #"{"a":"#)
        #expect(reply.status == 400 && reply.body.contains("Invalid data"))
        reply = try await server.send("PUT", "/bad%23key.json", body: "1")
        #expect(reply.status == 400 && reply.body.contains("Invalid path"))
        reply = try await server.send("PUT", "/keep.json", body: #"{"a.b":1}"#)
        #expect(reply.status == 400)
        reply = try await server.send("GET", "/keep")
        #expect(reply.status == 404)
        reply = try await server.send("OPTIONS", "/keep.json")
        #expect(reply.status == 405)
        // A method the HTTP parser does not know is refused by it, before any route.
        reply = try await server.send("BREW", "/keep.json")
        #expect(reply.status == 400 || reply.status == 405)
        reply = try await server.send("GET", "/keep.json?print=loud")
        #expect(reply.status == 400)
        let big = Data(repeating: UInt8(ascii: "1"), count: 17 * 1024 * 1024)
        reply = try await Self.send(
            "PUT", "http://127.0.0.1:\(server.httpPort)/big.json", body: big, token: Self.adminToken)
        #expect(reply.status == 413)
        #expect(try await server.send("GET", "/keep.json").body == "1", "the data is intact")
    }
}
