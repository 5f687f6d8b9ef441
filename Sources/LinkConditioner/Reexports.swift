// The runner protocol and its implementations are part of this module's API (`Conditioner(runner:)`,
// `Doctor(runner:)`), so code that conditions links gets them with `import LinkConditioner`.
@_exported import SystemSupport
