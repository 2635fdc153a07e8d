import CParentDeath
import Foundation

/// Starts the processes tests run (`weft serve`, client commands, crash writers, `weft-sim`, shells) so
/// that they die with the test process, however it ends: `try ChildProcess.start(process)` in place of
/// `try process.run()`.
///
/// Each child is started with `WEFT_DIE_WITH_PARENT` naming this process, which `weft` and `weft-sim` honour
/// by asking Linux for SIGKILL when their parent ends (Docs/CLI.md); other programs ignore it. A shell that
/// `exec`s `weft` keeps its pid, so its parent is still this process.
///
/// Linux sends that signal when the parent *thread* ends, not the process: a child started by a thread that
/// later ends would be killed mid-test. Swift concurrency's threads are not safe for this: on Linux they are
/// libdispatch workers, which end after some seconds without work (a suite's shared daemon started by one
/// would die while the suite runs). So every child is started from one thread of our own that never ends.
public enum ChildProcess {
    /// The variable `weft` and `weft-sim` read.
    public static let dieWithParentVariable = WEFT_PARENT_DEATH_VARIABLE

    /// Sets the variable on `process`'s environment (its own, or this process's when it has none), then
    /// runs it from the launching thread; throws what `run()` throws.
    public static func start(_ process: Process) throws {
        var environment = process.environment ?? ProcessInfo.processInfo.environment
        environment[dieWithParentVariable] = String(getpid())
        process.environment = environment
        try Launcher.shared.run(process)
    }
}

/// The thread every test child is started from: started once, it waits for work for the rest of the test
/// process's life.
private final class Launcher: @unchecked Sendable {
    static let shared = Launcher()

    /// One child to start, and the outcome once started.
    private final class Job: @unchecked Sendable {
        let process: Process
        var failure: (any Error)?
        let done = DispatchSemaphore(value: 0)

        init(_ process: Process) { self.process = process }
    }

    /// Guards `waiting`; signalled when a job arrives.
    private let condition = NSCondition()
    private var waiting: [Job] = []

    private init() {
        let thread = Thread { [self] in serve() }
        thread.name = "weft-test-child-launcher"
        thread.start()
    }

    /// Starts `process` on the launcher thread and waits for `run()` to return there.
    func run(_ process: Process) throws {
        let job = Job(process)
        condition.withLock {
            waiting.append(job)
            condition.signal()
        }
        job.done.wait()
        if let failure = job.failure { throw failure }
    }

    private func serve() -> Never {
        while true {
            let job = condition.withLock {
                while waiting.isEmpty { condition.wait() }
                return waiting.removeFirst()
            }
            do { try job.process.run() } catch { job.failure = error }
            job.done.signal()
        }
    }
}
