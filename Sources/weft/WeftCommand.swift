import ArgumentParser

/// The `weft` command: the daemon, client commands and benchmarks.
@main
struct WeftCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "weft",
        abstract: "Weft: an offline-first replication engine for JSON trees.",
        subcommands: [
            BenchCommand.self, ServeCommand.self, GetCommand.self, SetCommand.self, MergeCommand.self,
            PushCommand.self, IncrementCommand.self, WatchCommand.self, StatusCommand.self,
            CrashWriterCommand.self,
        ]
    )
}
