package jobs

import "interviewd/plugins"

// PluginHost returns the host exports run plugins on (nil when the runner has none),
// so a newly uploaded plugin is compiled and described by the same runtime, under the
// same limits, that will later run it.
func (r *Runner) PluginHost() *plugins.Host { return r.plugins }
