"""The pages: report.json read into what people and CI read: the HTML report, JUnit XML, the run
comparison, the runtime matrix and the release history, in the report's languages (messages/)."""
