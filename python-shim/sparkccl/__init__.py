"""PySpark shim for SparkCCL. The API arrives with the Spark plugin issue."""
