package research

import "interviewd/kv"

func (o ExportStatus) JobEnded() (bool, bool) {
	return o.Status == kv.ExportCompleted || o.Status == kv.ExportFailed, o.Status == kv.ExportFailed
}

// JobNotice is said in the task's status message when the job ended: a simulation its
// turn limit stopped says where.
func (o SimulationStatus) JobNotice() string {
	if o.Notice == nil {
		return ""
	}
	return *o.Notice
}

func (o SimulationStatus) JobEnded() (bool, bool) {
	return o.Status == kv.SimulationCompleted || o.Status == kv.SimulationFailed, o.Status == kv.SimulationFailed
}

func (o AuthoringStatus) JobEnded() (bool, bool) {
	return o.Status != kv.AuthoringWorking, o.Status == kv.AuthoringFailed
}

// JobOutcome is implemented by the outputs of the operations that poll a job: whether
// the job has ended, and whether it failed.
type JobOutcome interface {
	JobEnded() (ended, failed bool)
}

func (o AnalysisStatus) JobEnded() (bool, bool) {
	return o.Status == kv.AnalysisCompleted || o.Status == kv.AnalysisFailed, o.Status == kv.AnalysisFailed
}
