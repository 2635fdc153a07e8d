// A chat log kept in a SQLite file: messages pushed under push ids (they sort chronologically), a live
// subscription to new messages, an observer of the room's topic, an atomic batch, and a snapshot read.
//
//     swift run ChatLog [database-path]
//
// Run it twice with the same path to see the log grow across restarts.

import Foundation
import Weft

struct Message: Codable, Sendable {
    var author: String
    var text: String
}

func run(path: String) async throws {
    let replica = try Replica.open(at: path)
    try await replica.waitUntilLoaded()
    let room = try replica.node(at: "/rooms/general")
    let messages = try room.child("messages")
    let count = try room.child("messageCount")
    print("opened \(path): \(try await messages.childrenKeys().count) earlier messages")

    // New messages as they arrive (the first events, `.initial`, list the messages already there).
    let feed = messages.subscribe(to: .childAddition) { event in
        guard event.source != .initial, let message = try? event.decodedValue(as: Message.self) else { return }
        print("  [\(event.node.key ?? "")] \(message.author): \(message.text)")
    }
    // The topic only: this observer is not called for messages.
    let topicWatch = try room.observe(keyPaths: ["topic"]) { change in
        guard case .change(_, let properties) = change, let topic = properties.first else { return }
        print("  topic: \(topic.oldValue.stringValue ?? "none") → \(topic.newValue.stringValue ?? "none")")
    }

    try await room.child("topic").set("Offline-first replication")
    let first = try await messages.push(Message(author: "alice", text: "hello, anyone here?"))
    try await messages += Message(author: "bob", text: "hi alice")
    try await count.increment(by: 2)

    // A message and the counter, all or nothing: observers never see one without the other.
    try await replica.performChanges { batch in
        try batch.push(Message(author: "carol", text: "joining late"), under: messages)
        try batch.increment(by: 1, at: count)
    }

    // One consistent view of the room, whatever writes happen meanwhile.
    let (total, keys) = try replica.readSnapshot { reader in
        (try reader.value(of: count), try reader.childrenKeys(of: messages))
    }
    print("the room has \(keys.count) messages (counter: \(total)); alice's is \(first.key ?? "")")

    try await Task.sleep(nanoseconds: 50_000_000)  // let the last notifications print
    feed.invalidate()
    topicWatch.invalidate()
    await replica.shutdown()
}

// Without a path, a file of this run's own, removed at the end (no later run could find it).
let given = CommandLine.arguments.dropFirst().first
let path = given ?? FileManager.default.temporaryDirectory.appendingPathComponent("weft-chat-\(getpid()).sqlite").path
defer {
    if given == nil {
        for suffix in ["", "-wal", "-shm", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}
do {
    try await run(path: path)
} catch {
    print("chat failed: \(error)")
    exit(1)
}
