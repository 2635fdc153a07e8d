import CParentDeath
import Foundation

/// Starts the processes tests run (`weft serve`, client commands, crash writers, `weft-sim`, shells) so
/// that they die with the test process, however it ends: `try ChildProcess.start(process)` in place of
/// `try process.run()`.
///
/// Each child is started with `WEFT_DIE_WITH_PARENT` naming this process, which `weft` and `weft-sim` honour
/// by watching this process (a pidfd) and ending when it ends (Docs/CLI.md); other programs ignore it. A
/// shell that `exec`s `weft` keeps its pid, so its parent is still this process. The watch follows the
/// process, not the thread that started the child, so a child may be started from any thread.
public enum ChildProcess {
    /// The variable `weft` and `weft-sim` read.
    public static let dieWithParentVariable = WEFT_PARENT_DEATH_VARIABLE

    /// Sets the variable on `process`'s environment (its own, or this process's when it has none), then
    /// runs it; throws what `run()` throws.
    public static func start(_ process: Process) throws {
        var environment = process.environment ?? ProcessInfo.processInfo.environment
        environment[dieWithParentVariable] = String(getpid())
        process.environment = environment
        try process.run()
    }
}
