import Foundation
import Testing

/// The example programs (`swift run TaskBoard`, …; Docs/API.md, Docs/MODELS.md) run to their end with
/// exit 0 and print what the docs say they show. They are built with the tests, next to `weft`.
@Suite(.timeLimit(.minutes(5))) struct ExampleProgramTests {
    /// An example's executable, built next to `weft`.
    static func example(_ name: String) throws -> URL {
        try WeftBinary.url().deletingLastPathComponent().appendingPathComponent(name)
    }

    @Test(arguments: [
        ("TaskBoard", "all checks passed"),
        ("Inventory", "all checks passed"),
        ("SharedCounter", "both replicas count 700 visits, best day 400"),
    ])
    func anExampleRunsToItsEndAndPrintsItsVerdict(name: String, verdict: String) async throws {
        let run = try await WeftBinary.run([], token: "", seconds: 60, executable: try Self.example(name))
        #expect(run.status == 0, "\(name): \(run.stderr)")
        #expect(run.stdout.hasSuffix(verdict), "\(name) printed: \(run.stdout.suffix(400))")
    }

    @Test func theChatLogKeepsItsMessagesAcrossTwoRunsOnOneFile() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.file("chat.sqlite")
        let first = try await WeftBinary.run([path], token: "", seconds: 60, executable: try Self.example("ChatLog"))
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("the room has 3 messages (counter: 3)"), "\(first.stdout)")
        let second = try await WeftBinary.run([path], token: "", seconds: 60, executable: try Self.example("ChatLog"))
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("the room has 6 messages (counter: 6)"), "\(second.stdout)")
    }
}
