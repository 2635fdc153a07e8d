import ArgumentParser
import WeftSimulation

/// `weft-sim`: runs Weft's merge engine, sync sessions and store in a simulated world of
/// replicas, links, clocks and disks, driven by one seed.
@main
struct WeftSim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "weft-sim",
        abstract: "Deterministic simulation of Weft replicas under faults.",
        discussion: "Every run is decided by a seed: the same seed on the same commit replays bit for bit. "
            + "A failing run prints the command that replays it; `shrink` reduces it to a small schedule "
            + "that `replay` runs.",
        subcommands: [RunCommand.self, SwarmCommand.self, ShrinkCommand.self, ReplayCommand.self]
    )
}
