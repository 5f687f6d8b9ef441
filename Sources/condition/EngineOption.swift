import ArgumentParser
import LinkConditioner

extension EngineRequest: ExpressibleByArgument {}

/// `--engine`: which engine carries delay, jitter, loss and reordering (`apply`, `plan`, `run`).
struct EngineOption: ParsableArguments {
    @Option(help: ArgumentHelp("""
        What carries delay, jitter, loss and reordering: auto (netem where the kernel has it, else the user-space \
        engine), netem, or userspace (nftables + netfilter queue, also where netem exists). A switch keeps the \
        engine in force.
        """, valueName: "engine"))
    var engine: EngineRequest = .auto
}
