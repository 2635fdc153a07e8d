// A task board on two replicas in one process: an office replica that listens on 127.0.0.1 (a port the
// system picks) and a laptop that dials it. Boards, tasks and people are typed models linked with
// integrity (`Relation`, `References`, `AssociatedValues`); the office follows the open tasks, by
// priority, with a live query that prints each change set. The laptop then goes offline (its replica
// shut down and reopened without sync), both sides edit, the office deletes a person while the laptop
// assigns a task to her, and once they reconnect both hold the same state, with every link intact.
// Every step checks what it promises; the program exits with status 1 when a check fails.
//
//     swift run TaskBoard

import Foundation
import Weft
import WeftCore

// MARK: - Models

final class Person: Model {
    override class var collection: String { "people" }
    @Property var name: String
}

final class Board: Model {
    @Property var title: String
    /// The board's tasks, each keeping a back-link to its entry.
    @References var tasks: [TaskItem]
    /// A role per person; deleting the person removes the entry.
    @AssociatedValues var roles: [(key: Person, value: String)]
}

final class TaskItem: Model {
    override class var collection: String { "tasks" }
    @Property var title: String
    @Property var priority = 0
    @Property var done = false
    /// Deleting the person leaves the task unassigned (nullify, the default).
    @Relation var assignee: Person?
    /// Deleting the board deletes its tasks (cascade).
    @Relation(onDelete: .cascade) var board: Board?
}

// MARK: - Checks and waits

struct CheckFailed: Error, CustomStringConvertible {
    let description: String
}

/// Fails the run unless `condition` holds.
func check(_ condition: Bool, _ what: @autoclosure () -> String) throws {
    guard condition else { throw CheckFailed(description: what()) }
    print("  ok: \(what())")
}

/// Polls `condition` every 20 ms for at most 30 s.
func poll(_ what: String, _ condition: () throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(30)
    while ContinuousClock.now < deadline {
        if try condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw CheckFailed(description: "timed out waiting for \(what)")
}

/// Waits until both replicas hold the same ops, then checks they hold one state with every link intact.
func waitUntilConverged(_ office: Replica, _ laptop: Replica) async throws {
    try await office.waitUntilSynced(timeout: .seconds(30))
    try await laptop.waitUntilSynced(timeout: .seconds(30))
    try check(office.digest == laptop.digest, "both replicas hold the same state")
    try checkIntegrity(office)
}

/// Checks the relation rule on a replica's state: every link's target exists and holds its back-link,
/// and every back-link names a link that points back.
func checkIntegrity(_ replica: Replica) throws {
    let state = replica.snapshot()
    var links: [Path] = []
    for (id, _) in state["tasks"].children {
        links += [try Path("/tasks/\(id.text)/assignee"), try Path("/tasks/\(id.text)/board")]
    }
    for (id, board) in state["boards"].children {
        links += try board["tasks"].children.keys.map { try Path("/boards/\(id.text)/tasks/\($0.text)") }
        links += try board["roles"].children.keys.map { try Path("/boards/\(id.text)/roles/\($0.text)/key") }
    }
    let violations = RelationIntegrity.violations(in: state, links: links)
    try check(violations.isEmpty, "integrity holds over \(links.count) link nodes\(violations.isEmpty ? "" : ": \(violations)")")
}

/// What the office's live query delivered: the last result's titles, and how many changes came.
final class LiveLog: @unchecked Sendable {
    // Sendable: fields are guarded by `lock`.
    private let lock = NSLock()
    private var titles: [String] = []
    private var changes = 0

    func note(_ change: FetchedResultChange<TaskItem>) {
        let result = change.result.map { "\($0.title) (p\($0.priority))" }
        let line: String
        switch change {
        case .initial:
            line = "initial \(result)"
        case .updated(_, let deleted, let inserted, let modified, let moved):
            var parts: [String] = []
            if !deleted.isEmpty { parts.append("deleted \(Array(deleted))") }
            if !inserted.isEmpty { parts.append("inserted \(Array(inserted))") }
            if !modified.isEmpty { parts.append("modified \(Array(modified))") }
            if !moved.isEmpty { parts.append("moved \(moved.map { "\($0.from)→\($0.to)" })") }
            line = "updated: \(parts.joined(separator: ", ")) → \(result)"
        }
        print("    [office live query] \(line)")
        lock.withLock {
            titles = change.result.map(\.title)
            changes += 1
        }
    }

    var lastTitles: [String] { lock.withLock { titles } }
}

// MARK: - The run

let token = "the task board example's shared secret"
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("weft-taskboard-\(getpid())")
let officePath = directory.appendingPathComponent("office.sqlite").path
let laptopPath = directory.appendingPathComponent("laptop.sqlite").path

/// The open tasks now, as the live query should show them: not done, highest priority first.
func openTitles(_ replica: Replica) throws -> [String] {
    try replica.fetch(for: TaskItem.self).where(\.$done == false, orderBy: [\.$priority.descending]).map(\.title)
}

func run() async throws {
    Replica.logLevel = .warning  // the sync connection and session lines stay quiet
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }

    print("1. open two replicas: the office listens, the laptop dials it")
    let office = try Replica.open(at: officePath)
    var hub = ReplicaSyncOptions()
    hub.role = .hub
    try office.configureSync(hub)
    let port = try await office.listen(on: "127.0.0.1:0", token: token)
    var laptop = try Replica.open(at: laptopPath)
    try await laptop.connect(to: "127.0.0.1:\(port)", token: token, waitUntilConnected: .seconds(30))
    try await poll("the office to see the laptop") { office.syncStatus.connectedCount == 1 }
    try check(true, "the laptop is connected to the office on port \(port)")

    print("2. the office follows the open tasks by priority with a live query")
    let live = LiveLog()
    let changes = try office.changes(for: TaskItem.self).where(\.$done == false, orderBy: [\.$priority.descending])
    let follower = Task { for await change in changes { live.note(change) } }

    print("3. the office creates a board, two people and three tasks, linked, in one transaction")
    let ann = Person()
    ann.name = "Ann"
    let bob = Person()
    bob.name = "Bob"
    let board = Board()
    board.title = "Launch"
    let transaction = office.transaction()
    try ann.insert(in: transaction)
    try bob.insert(in: transaction)
    try board.insert(in: transaction)
    for (title, priority, assignee) in [("Write docs", 2, ann), ("Fix sync", 5, bob), ("Ship", 9, ann)] {
        let task = TaskItem()
        task.title = title
        task.priority = priority
        task.assignee = assignee
        task.board = board
        try task.insert(in: transaction)
        board.$tasks.insert(task)
    }
    board.$roles.set("lead", for: ann)
    board.$roles.set("reviewer", for: bob)
    try board.save(in: transaction)
    try await transaction.commit()
    try await poll("the live query to show three tasks") { live.lastTitles == ["Ship", "Fix sync", "Write docs"] }
    try await waitUntilConverged(office, laptop)
    let bobID = try bob.id ?? { throw CheckFailed(description: "Bob has no id") }()
    let tasksByTitle = { (replica: Replica) throws -> [String: TaskItem] in
        Dictionary(uniqueKeysWithValues: try replica.fetch(for: TaskItem.self).all().map { ($0.title, $0.object) })
            .mapValues { TaskItem(node: $0.node!) }
    }
    try check(try tasksByTitle(laptop)["Fix sync"]?.assignee?.name == "Bob", "the laptop sees Fix sync assigned to Bob")

    print("4. partition: the laptop stops syncing (its replica reopened offline) and both sides edit")
    await laptop.shutdown()
    laptop = try Replica.open(at: laptopPath)
    try await laptop.waitUntilLoaded()
    try await poll("the office to see the laptop leave") { office.syncStatus.connectedCount == 0 }
    print("   office: deletes Bob (his task is unassigned, his role entry removed: nullify)")
    let deletion = office.transaction()
    try Person(node: office.node(for: "/people/\(bobID)")!).delete(in: deletion)
    try await deletion.commit(waitingFor: .durable)
    print("   office: raises Write docs to priority 7")
    try await office.performChanges { batch in
        let docs = try tasksByTitle(office)["Write docs"]!
        docs.priority = 7
        try docs.save(in: batch)
    }
    print("   laptop: assigns Write docs to Bob, not knowing he was deleted (a link racing a delete)")
    let offline = try tasksByTitle(laptop)
    let link = laptop.transaction()
    offline["Write docs"]!.assignee = Person(node: laptop.node(for: "/people/\(bobID)")!)
    try offline["Write docs"]!.save(in: link)
    let linkReceipt = try await link.commit(waitingFor: .durable)
    print("   laptop: marks Ship done")
    try await laptop.performChanges { batch in
        offline["Ship"]!.done = true
        try offline["Ship"]!.save(in: batch)
    }
    try check(try tasksByTitle(laptop)["Write docs"]?.assignee?.name == "Bob", "offline, the laptop shows Write docs assigned to Bob")
    try check(office.digest != laptop.digest, "the two replicas differ while apart")
    try await poll("the live query to show the office's edits") { live.lastTitles == ["Ship", "Write docs", "Fix sync"] }

    print("5. the laptop reconnects: both converge")
    try await laptop.connect(to: "127.0.0.1:\(port)", token: token, waitUntilConnected: .seconds(30))
    try await waitUntilConverged(office, laptop)
    try checkIntegrity(laptop)
    let status = try await linkReceipt?.wait(for: .stable, timeout: .seconds(10))
    if case .rejected(let why)? = status {
        try check(true, "the laptop's link was stamped after the delete it had not seen: rejected (\(why))")
    } else {
        throw CheckFailed(description: "the laptop's link should be rejected, it is \(String(describing: status))")
    }
    let merged = try tasksByTitle(laptop)
    try check(merged["Write docs"]?.assignee?.name == "Ann", "Write docs stays with Ann")
    try check(merged["Write docs"]?.priority == 7, "with the office's priority 7")
    try check(merged["Fix sync"]?.assignee == nil, "Fix sync lost its assignee with Bob")
    try check(merged["Ship"]?.done == true, "Ship is done, as the laptop said")
    try check(laptop.value(at: try Path("/people/\(bobID)")) == .null, "Bob is gone")
    try await poll("the live query to drop the done task") { live.lastTitles == ["Write docs", "Fix sync"] }
    print("   laptop: retries the link on the merged state")
    do {
        try await laptop.performChanges { batch in
            merged["Write docs"]!.assignee = Person(node: laptop.node(for: "/people/\(bobID)")!)
            try merged["Write docs"]!.save(in: batch)
        }
        throw CheckFailed(description: "a link to a deleted person was accepted")
    } catch let error as WeftError where error.code == .invalidValue {
        try check(true, "refused: \(error.message)")
    }

    print("6. the office deletes the board: its tasks go with it (cascade)")
    try await office.performChanges { batch in try Board(node: board.node!).delete(in: batch) }
    try await poll("the live query to empty") { live.lastTitles.isEmpty }
    try await waitUntilConverged(office, laptop)
    try check(laptop.snapshot()["tasks"] == .null, "no task is left on the laptop")
    let people = laptop.snapshot()["people"].children.values
    try check(people.count == 1 && people.allSatisfy { $0["~in"] == .null }, "Ann stays, without back-links to deleted tasks")

    follower.cancel()
    await laptop.shutdown()
    await office.shutdown()
}

do {
    try await run()
    print("all checks passed")
} catch {
    print("FAILED: \(error)")
    exit(1)
}
