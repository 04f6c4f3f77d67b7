package org.sparkccl.ml;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.Params;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Saving and loading in MLlib's layout: {@code path/metadata} is MLlib's params metadata (written
 * by MLlib's own params writer, so {@code Pipeline} and {@code PipelineModel} find the class and
 * uid there), and a model adds its numbers as one row of Parquet under {@code path/data}.
 *
 * <pre>{@code
 * public MLWriter write() {
 *   return Persistence.modelWriter(DefaultParamsWritable.super.write(), this::dataRow);
 * }
 * public static MLReader<MyModel> read() {
 *   return Persistence.modelReader((uid, row) -> new MyModel(uid, row.getDouble(0)));
 * }
 * }</pre>
 */
public final class Persistence {
  private static final ObjectMapper JSON = new ObjectMapper();

  private Persistence() {}

  /** A writer for a model: MLlib's params metadata, then the model's row. */
  public static MLWriter modelWriter(
      MLWriter paramsWriter, Function<SparkSession, Dataset<Row>> row) {
    return new MLWriter() {
      @Override
      public void saveImpl(String path) {
        try {
          paramsWriter.session(sparkSession()).save(path);
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
        row.apply(sparkSession()).repartition(1).write().parquet(path + "/data");
      }
    };
  }

  /** A reader for params-only stages: {@code create} makes the instance of a uid. */
  public static <T extends Params> MLReader<T> paramsReader(Function<String, T> create) {
    return new MLReader<T>() {
      @Override
      public T load(String path) {
        JsonNode metadata = metadata(sparkSession(), path);
        return setParams(create.apply(metadata.get("uid").asText()), metadata);
      }
    };
  }

  /** A reader for models: {@code create} makes the model of a uid and its data row. */
  public static <T extends Params> MLReader<T> modelReader(
      java.util.function.BiFunction<String, Row, T> create) {
    return new MLReader<T>() {
      @Override
      public T load(String path) {
        JsonNode metadata = metadata(sparkSession(), path);
        Row row = sparkSession().read().parquet(path + "/data").head();
        return setParams(create.apply(metadata.get("uid").asText(), row), metadata);
      }
    };
  }

  private static JsonNode metadata(SparkSession spark, String path) {
    String text = spark.read().textFile(path + "/metadata").head();
    try {
      return JSON.readTree(text);
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("unreadable metadata at " + path + "/metadata", e);
    }
  }

  /** Sets the saved (user-set) params; defaults come from the instance's own constructor. */
  private static <T extends Params> T setParams(T instance, JsonNode metadata) {
    JsonNode params = metadata.get("paramMap");
    for (Map.Entry<String, JsonNode> e : params.properties()) {
      Param<Object> param = instance.getParam(e.getKey());
      instance.set(param, param.jsonDecode(e.getValue().toString()));
    }
    return instance;
  }
}
