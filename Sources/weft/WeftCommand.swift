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
            CrashWriterCommand.self,
        ]
    )

    /// Runs the command line, with the negative numbers a write takes as values kept from being read
    /// as options (``NegativeNumbers``).
    static func main() async {
        StandardStream.openClosedOnes()
        await main(NegativeNumbers.shielded(Array(CommandLine.arguments.dropFirst())))
    }
}

/// `weft incr /score -5` and `weft set /t -0.5`: the argument parser reads any argument that starts
/// with a dash as an option, so a negative number given as a value was refused as an unknown option
/// unless `--` came before it. The commands that take a JSON value or a step get each argument that
/// is a negative number with a space in front, which the parser takes as a value and JSON ignores.
enum NegativeNumbers {
    /// The commands whose positional arguments may be negative numbers.
    static let commands: Set<String> = ["set", "merge", "push", "incr"]

    static func shielded(_ arguments: [String]) -> [String] {
        guard let command = arguments.first, commands.contains(command) else { return arguments }
        var shielded = [command]
        var afterSeparator = false
        for argument in arguments.dropFirst() {
            if argument == "--" { afterSeparator = true }
            shielded.append(!afterSeparator && isNegativeNumber(argument) ? " " + argument : argument)
        }
        return shielded
    }

    /// True for `-` followed by a JSON number's digits: `-1`, `-0.5`, `-2e3`, and for `-.5`.
    static func isNegativeNumber(_ argument: String) -> Bool {
        let digits = argument.utf8.dropFirst()
        guard argument.utf8.first == UInt8(ascii: "-"), let first = digits.first else { return false }
        let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        guard isDigit(first) || (first == UInt8(ascii: ".") && digits.dropFirst().first.map(isDigit) == true) else {
            return false
        }
        return digits.allSatisfy { isDigit($0) || ".eE+-".utf8.contains($0) }
    }
}
