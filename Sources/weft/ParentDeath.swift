import CParentDeath
import Foundation

/// `WEFT_DIE_WITH_PARENT=PID`, a testing aid (Docs/CLI.md): the command dies with its parent, so that
/// daemons a test started do not outlive a test process that crashed or was killed.
enum ParentDeath {
    /// Arms the watch on the parent when the environment asks for it; a request that cannot be honoured
    /// is a usage error (exit 2) before the command does anything.
    static func armIfAsked() {
        guard let problem = weft_parent_death_arm_or_explain() else { return }
        ClientFailure(code: .usage, String(cString: problem)).exit()
    }
}
