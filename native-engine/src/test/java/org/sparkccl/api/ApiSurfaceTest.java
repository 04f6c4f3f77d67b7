package org.sparkccl.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The engine's API is what its module exports; this test keeps that and the README's API table the
 * same, so that a public type can neither appear in an exported package unannounced nor be
 * documented without existing.
 */
@DisplayName("the public API")
class ApiSurfaceTest {
  private static final Path CLASSES = Path.of("target", "classes");
  private static final Path README = Path.of("..", "README.md");
  private static final Pattern API_ROW = Pattern.compile("^\\| `([A-Za-z0-9_.]+)` \\|");

  @Test
  @DisplayName("is exactly the public types of the exported packages, as the README lists them")
  void exportedPublicTypesAreTheDocumentedOnes() throws Exception {
    Set<String> exported = exportedPublicTypes();
    Set<String> documented = documentedTypes();
    assertFalse(exported.isEmpty(), "no exported public types found under " + CLASSES);
    Set<String> undocumented = new TreeSet<>(exported);
    undocumented.removeAll(documented);
    Set<String> missing = new TreeSet<>(documented);
    missing.removeAll(exported);
    assertEquals(
        Set.of(),
        undocumented,
        "public types in exported packages that the README's API table does not list");
    assertEquals(Set.of(), missing, "types the README's API table lists that are not exported");
  }

  @Test
  @DisplayName("leaves the engine's inside unexported")
  void internalPackagesAreNotExported() throws IOException {
    Set<String> packages = exportedPackages();
    for (String internal :
        new String[] {
          "org.sparkccl.comm",
          "org.sparkccl.kernel",
          "org.sparkccl.proxy",
          "org.sparkccl.transport.socket",
          "org.sparkccl.device.cuda"
        }) {
      assertFalse(packages.contains(internal), internal + " is exported");
    }
    assertTrue(packages.contains("org.sparkccl"), "org.sparkccl is not exported: " + packages);
  }

  private static Set<String> exportedPackages() throws IOException {
    try (InputStream in = Files.newInputStream(CLASSES.resolve("module-info.class"))) {
      Set<String> packages = new TreeSet<>();
      for (ModuleDescriptor.Exports e : ModuleDescriptor.read(in).exports()) {
        assertFalse(e.isQualified(), "qualified export " + e);
        packages.add(e.source());
      }
      return packages;
    }
  }

  /** Public types (nested ones as {@code Outer.Inner}) of the exported packages, simple names. */
  private static Set<String> exportedPublicTypes() throws Exception {
    Set<String> types = new TreeSet<>();
    for (String pkg : exportedPackages()) {
      Path dir = CLASSES.resolve(pkg.replace('.', '/'));
      try (Stream<Path> files = Files.list(dir)) {
        for (Path f : files.filter(p -> p.toString().endsWith(".class")).toList()) {
          String binary = pkg + "." + f.getFileName().toString().replace(".class", "");
          Class<?> c = Class.forName(binary, false, ApiSurfaceTest.class.getClassLoader());
          if (isPublicApi(c)) {
            types.add(c.getName().substring(pkg.length() + 1).replace('$', '.'));
          }
        }
      }
    }
    return types;
  }

  private static boolean isPublicApi(Class<?> c) {
    for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
      if (!Modifier.isPublic(k.getModifiers()) || k.isAnonymousClass() || k.isSynthetic()) {
        return false;
      }
    }
    return true;
  }

  /** The first column of the rows between the README's API markers. */
  private static Set<String> documentedTypes() throws IOException {
    String readme = Files.readString(README, StandardCharsets.UTF_8);
    int begin = readme.indexOf("<!-- api:begin -->");
    int end = readme.indexOf("<!-- api:end -->");
    assertTrue(begin >= 0 && end > begin, "README.md has no <!-- api:begin/end --> table");
    Set<String> types = new TreeSet<>();
    for (String line : readme.substring(begin, end).split("\n")) {
      Matcher m = API_ROW.matcher(line);
      if (m.find()) {
        types.add(m.group(1));
      }
    }
    return types;
  }
}
