package org.sparkccl.ml.train;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.ml.linalg.DenseVector;
import org.apache.spark.ml.linalg.SparseVector;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.sql.Row;

/**
 * Packs a partition's rows ({@code label, weight, features}) into dense blocks of at most {@code
 * maxRows} rows. Sparse vectors are densified: the estimators are for dense data.
 */
final class Blocks {
  private Blocks() {}

  /** Rows per block so that a block's features take at most {@code maxBlockSizeInMB}. */
  public static int rowsPerBlock(double maxBlockSizeInMB, int numFeatures) {
    double mb = maxBlockSizeInMB > 0 ? maxBlockSizeInMB : 1.0; // MLlib's default, 1 MiB
    long rows = (long) Math.floor(mb * 1024 * 1024 / (8.0 * Math.max(1, numFeatures)));
    return (int) Math.max(1, Math.min(rows, 1 << 20));
  }

  public static List<Block> pack(Iterator<Row> rows, int numFeatures, int maxRows) {
    List<Block> blocks = new ArrayList<>();
    double[] x = new double[maxRows * numFeatures];
    double[] y = new double[maxRows];
    double[] w = new double[maxRows];
    int n = 0;
    while (rows.hasNext()) {
      Row row = rows.next();
      Vector v = (Vector) row.get(2);
      if (v.size() != numFeatures) {
        throw new IllegalArgumentException(
            "a features vector has "
                + v.size()
                + " elements; expected "
                + numFeatures
                + " like the first row's");
      }
      y[n] = row.getDouble(0);
      w[n] = row.getDouble(1);
      int base = n * numFeatures;
      if (v instanceof SparseVector sparse) {
        int[] idx = sparse.indices();
        double[] values = sparse.values();
        for (int k = 0; k < idx.length; k++) {
          x[base + idx[k]] = values[k];
        }
      } else {
        System.arraycopy(((DenseVector) v).values(), 0, x, base, numFeatures);
      }
      n++;
      if (n == maxRows) {
        blocks.add(new Block(n, numFeatures, x.clone(), y.clone(), w.clone()));
        Arrays.fill(x, 0.0);
        n = 0;
      }
    }
    if (n > 0) {
      blocks.add(
          new Block(
              n,
              numFeatures,
              Arrays.copyOf(x, n * numFeatures),
              Arrays.copyOf(y, n),
              Arrays.copyOf(w, n)));
    }
    return blocks;
  }
}
