import ArgumentParser
import Foundation
@_spi(Engine) import Weft
import WeftCore
import WeftStore

/// `weft _crash-writer`: writes to a replica without end and prints `durable <stamp>` for every op once
/// it is durable. The crash-safety test kills it with SIGKILL at random moments, then checks the file.
/// Hidden: a tool for tests, not for users.
struct CrashWriterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "_crash-writer",
        abstract: "Write without end, printing each op once durable (for crash tests).",
        shouldDisplay: false
    )

    @Option(help: "The database file.")
    var db: String

    @Option(help: "Durability: normal or full.")
    var durability: String = "normal"

    @Option(help: "Seed of the writes.")
    var seed: UInt64 = 1

    @Option(help: "Stop after this many ops (0: never).")
    var opsMax: Int = 0

    @Option(help: "Define an index before writing, as collection:field (repeatable).")
    var index: [String] = []

    func run() async throws {
        var options = ReplicaOptions()
        options.durability = durability == "full" ? .full : .normal
        options.functions = Workload.registry
        options.groupCommitDelayMilliseconds = 0
        let replica = try Replica.open(at: db, options: options)
        try await replica.waitUntilLoaded()
        for definition in index {
            let parts = definition.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw ValidationError("--index takes collection:field, not \(definition)") }
            try replica.defineIndex(on: parts[0], orderedBy: parts[1])
        }
        if !index.isEmpty { try await replica.flush() }
        let output = FileHandle.standardOutput
        output.write(Data("ready \(ProcessInfo.processInfo.processIdentifier)\n".utf8))
        var generator = SeededGenerator(seed: seed)
        var pending: [WriteReceipt] = []
        var written = 0
        while opsMax == 0 || written < opsMax {
            let count = generator.int(in: 1...200)
            for _ in 0..<count {
                let (path, kind) = CrashWrites.next(using: &generator)
                pending.append(try replica.submit(path: path, kind: kind, at: .now))
            }
            written += count
            // Most rounds wait for durability; the others leave writes pending for the kill to find.
            guard generator.chance(0.8), !pending.isEmpty else { continue }
            // Not the last receipt's wait: a write rejected at merge is final at once, before its commit.
            try await replica.flush()
            let lines = pending.map { "durable \($0.stamp.text)\n" }.joined()
            output.write(Data(lines.utf8))
            pending = []
        }
        try await replica.flush()
        await replica.shutdown()
    }
}

/// The writes of the crash writer: every kind of op over a small path space with hot keys.
enum CrashWrites {
    static func next(using generator: inout SeededGenerator) -> (Path, OpKind) {
        let item = "i\(generator.below(generator.chance(0.5) ? 4 : 200))"
        let counter = "c\(generator.below(8))"
        switch generator.below(10) {
        case 0, 1, 2:
            return (path(["items", item, "score"]), .set(.int(Int64(generator.below(1_000)))))
        case 3:
            let value = Value.object([
                "name": .string("n\(generator.below(50))"), "tags": .int(Int64(generator.below(9))),
            ])
            return (path(["items", item]), .set(generator.chance(0.1) ? .null : value))
        case 4:
            let children = [
                MergeChild(relative: path(["name"]), value: .string("m\(generator.below(9))")),
                MergeChild(relative: path(["deep", "x"]), value: .bool(generator.chance(0.5))),
            ]
            return (path(["items", item]), .merge(children))
        case 5, 6, 7:
            return (path(["counters", counter]), .increment(by: .int(Int64(generator.below(10)) - 3), from: .int(0)))
        case 8:
            return (
                .root,
                .batch([
                    .set(path(["items", item, "flag"]), .bool(true)),
                    .increment(path(["counters", counter]), by: .int(1), from: .int(0)),
                ])
            )
        default:
            let arguments = Value.object(["from": .string("a0"), "to": .string("a1"), "amount": .int(1)])
            return (path(["accounts"]), .call(FunctionCall(name: "transfer", version: 1, arguments: arguments)))
        }
    }

    private static func path(_ keys: [String]) -> Path {
        guard let path = try? Path(keys: keys) else { preconditionFailure("crash writer keys are valid: \(keys)") }
        return path
    }
}
