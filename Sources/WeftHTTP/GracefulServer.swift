import Hummingbird
import Logging
import ServiceLifecycle

/// Runs a Hummingbird application in a service group of its own and stops it gracefully.
///
/// Cancelling the task that runs a NIO async server traps the whole process when a connection was
/// accepted but not yet handed to the server loop ("Deinited NIOAsyncWriter without calling finish()",
/// apple/swift-nio#2637): a test run died of it once. A graceful shutdown closes the listening socket
/// and serves what was already accepted, so ``stop(grace:)`` asks for one and cancels only when it has
/// not ended within the grace period.
///
/// ```swift
/// let server = GracefulServer(running: application, logger: logger) { error in … }
/// …
/// await server.stop()
/// ```
public final class GracefulServer: Sendable {
    private let group: ServiceGroup
    private let task: Task<Void, Never>

    /// Starts `application`; `stopped` is called once it has stopped, with the error it stopped on.
    public init(
        running application: some Service, logger: Logger,
        stopped: @escaping @Sendable ((any Error)?) -> Void = { _ in }
    ) {
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [application], logger: logger))
        self.group = group
        task = Task {
            do {
                try await group.run()
                stopped(nil)
            } catch {
                stopped(error)
            }
        }
    }

    /// Stops listening, lets the requests in progress end, and returns once the server has stopped;
    /// past `grace` the server is cancelled instead.
    public func stop(grace: Duration = .seconds(HTTPLimits.shutdownGraceSeconds)) async {
        await group.triggerGracefulShutdown()
        let task = self.task
        let deadline = Task {
            try? await Task.sleep(for: grace)
            if !Task.isCancelled { task.cancel() }
        }
        await task.value
        deadline.cancel()
    }
}
