import ArgumentParser
import Foundation

/// The `weft` command: the daemon, client commands and benchmarks.
@main
struct WeftCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "weft",
        abstract: "Weft: an offline-first replication engine for JSON trees.",
        subcommands: [
            BenchCommand.self, ServeCommand.self, GetCommand.self, SetCommand.self, MergeCommand.self,
            PushCommand.self, IncrementCommand.self, WatchCommand.self, QueryCommand.self, StatusCommand.self,
            SubscribeCommand.self,
            CrashWriterCommand.self,
        ]
    )

    /// Runs the command line, with the values that start with a dash kept from being read as options
    /// (``DashValues``).
    static func main() async {
        StandardStream.openClosedOnes()
        ParentDeath.armIfAsked()
        await main(DashValues.shielded(Array(CommandLine.arguments.dropFirst())))
    }
}

/// `weft incr /score -5`, `weft set /t -0.5`, `weft set /x -Infinity`: the argument parser reads any
/// argument that starts with a dash as an option, so such a value was refused as an unknown option
/// ("Missing expected argument", exit 64) unless `--` came before it. For the client commands that take
/// paths and values, every argument is sorted before parsing: the options (`--name`, with its value when
/// it takes one, and `-h`) go first, then `--`, then every other argument in its order, so a value that
/// starts with a dash reaches the command as a value (and `-Infinity` is "invalid JSON", as `Infinity` is).
enum DashValues {
    /// The commands whose positional arguments (paths and values) may start with a dash.
    static let commands: Set<String> = ["get", "set", "merge", "push", "incr", "watch"]
    /// The options of those commands that take a value (``ClientOptions``).
    static let optionsTakingValue: Set<String> = ["--server", "--token", "--name", "--server-name", "--timeout"]

    static func shielded(_ arguments: [String]) -> [String] {
        guard let command = arguments.first, commands.contains(command) else { return arguments }
        var options: [String] = []
        var values: [String] = []
        var rest = arguments.dropFirst()
        while let argument = rest.popFirst() {
            if argument == "--" {
                values += rest
                break
            }
            guard argument.hasPrefix("--") || argument == "-h" else {
                values.append(argument)
                continue
            }
            options.append(argument)
            if optionsTakingValue.contains(argument), let value = rest.popFirst() { options.append(value) }
        }
        return [command] + options + (values.isEmpty ? [] : ["--"] + values)
    }
}
