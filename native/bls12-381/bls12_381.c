/*
 * Coffer's native BLS12-381 backend: the few curve operations BBS needs (src/bbs/curve-native.ts),
 * over blst's C sources, which the build takes from the c-kzg package at install time
 * (scripts/build-native.mjs). Written against node-api's C interface (node_api.h), whose ABI is
 * stable across Node versions, and context-aware, so worker threads load it as the main thread
 * does. It keeps no state of its own: every function is pure over its arguments.
 *
 * Points cross the boundary as Uint8Arrays holding blst's affine structs (G1: 96 octets, G2: 192
 * octets, in blst's internal form: opaque to JavaScript, never stored or sent). Only the
 * decompression functions read points from outside octets, and they check the encoding, the
 * curve equation and, unless the caller says the octets are its own, the subgroup. Scalars cross
 * as 32 big-endian octets.
 *
 * Timing: blst's single-point multiplications are constant time. Its multi-scalar
 * multiplications are not (up to 64 points a table indexed by the scalars' digits, Pippenger's
 * buckets beyond), nor are the pairing and the decompression checks, which see public inputs
 * only. src/bbs/curve-native.ts says which secret scalars reach the multi-scalar ones.
 */
#define NAPI_VERSION 8
#include <node_api.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blst.h"

/* Bumped when a function's contract changes; curve-native.ts refuses an addon of another. */
#define ADDON_INTERFACE 2

#define G1_COMPRESSED 48
#define G2_COMPRESSED 96
#define G1_AFFINE ((size_t)sizeof(blst_p1_affine))
#define G2_AFFINE ((size_t)sizeof(blst_p2_affine))
#define SCALAR 32
#define SCALAR_BITS 255
#define LINES_COUNT 68
#define LINES_SIZE ((size_t)sizeof(blst_fp6) * LINES_COUNT)
/*
 * Window of the precomputed multi-scalar multiplication (g1Rows, g1MultiScalarMulRows): a point's
 * row holds 2^(ROW_WBITS-1) affine multiples of it. blst's own small-MSM path uses windows of 4
 * and recomputes the rows at every call; rows of fixed points (the generators) are computed once
 * by the caller and kept, and a wider window halves the additions per point (43 windows for 255
 * bits instead of 64) for 3 KiB a point.
 */
#define ROW_WBITS 6
#define ROW_SIZE (G1_AFFINE << (ROW_WBITS - 1))

/* Returns NULL from the calling function when a node-api call fails (an exception is pending). */
#define CALL(env, call)                                                                            \
  do {                                                                                             \
    if ((call) != napi_ok) {                                                                       \
      throw_last_error(env);                                                                       \
      return NULL;                                                                                 \
    }                                                                                              \
  } while (0)

static void throw_last_error(napi_env env) {
  /* The error info first: any later node-api call resets it. */
  const napi_extended_error_info *info = NULL;
  char message[128] = "node-api call failed";
  if (napi_get_last_error_info(env, &info) == napi_ok && info != NULL && info->error_message != NULL) {
    strncpy(message, info->error_message, sizeof(message) - 1);
    message[sizeof(message) - 1] = '\0';
  }
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (!pending) napi_throw_error(env, NULL, message);
}

static napi_value type_error(napi_env env, const char *message) {
  napi_throw_type_error(env, NULL, message);
  return NULL;
}

/*
 * The octets of a Uint8Array argument (a Buffer is one). `length` 0 accepts any length, else it
 * must match. Returns false, with a TypeError pending, for anything else.
 */
static bool get_bytes(napi_env env, napi_value value, size_t length, const uint8_t **data,
                      size_t *size, const char *message) {
  bool is_typed = false;
  napi_typedarray_type type;
  void *raw = NULL;
  size_t count = 0;
  if (napi_is_typedarray(env, value, &is_typed) != napi_ok || !is_typed ||
      napi_get_typedarray_info(env, value, &type, &count, &raw, NULL, NULL) != napi_ok ||
      type != napi_uint8_array || (length != 0 && count != length)) {
    napi_throw_type_error(env, NULL, message);
    return false;
  }
  /* An empty view may have no backing store; point at something readable anyway. */
  static const uint8_t empty[1] = {0};
  *data = raw != NULL ? (const uint8_t *)raw : empty;
  *size = count;
  return true;
}

/* A fresh Uint8Array of `length` octets (its own ArrayBuffer, never a pooled Buffer). */
static napi_value new_bytes(napi_env env, size_t length, uint8_t **data) {
  napi_value buffer, array;
  void *raw = NULL;
  CALL(env, napi_create_arraybuffer(env, length, &raw, &buffer));
  CALL(env, napi_create_typedarray(env, napi_uint8_array, length, buffer, 0, &array));
  *data = (uint8_t *)raw;
  return array;
}

static napi_value copy_out(napi_env env, const void *source, size_t length) {
  uint8_t *data = NULL;
  napi_value array = new_bytes(env, length, &data);
  if (array != NULL) memcpy(data, source, length);
  return array;
}

static napi_value get_null(napi_env env) {
  napi_value result;
  CALL(env, napi_get_null(env, &result));
  return result;
}

static napi_value get_boolean(napi_env env, bool value) {
  napi_value result;
  CALL(env, napi_get_boolean(env, value, &result));
  return result;
}

/* Reads exactly `expected` arguments. */
static bool get_args(napi_env env, napi_callback_info info, size_t expected, napi_value *args) {
  size_t count = expected;
  if (napi_get_cb_info(env, info, &count, args, NULL, NULL) != napi_ok) {
    throw_last_error(env);
    return false;
  }
  if (count < expected) {
    napi_throw_type_error(env, NULL, "missing arguments");
    return false;
  }
  return true;
}

/* Copies are cheap next to the arithmetic, and make every struct aligned whatever the view's offset. */
static bool g1_arg(napi_env env, napi_value value, blst_p1_affine *point) {
  const uint8_t *data;
  size_t size;
  if (!get_bytes(env, value, G1_AFFINE, &data, &size, "expected a G1 point of this backend")) return false;
  memcpy(point, data, G1_AFFINE);
  return true;
}

static bool g2_arg(napi_env env, napi_value value, blst_p2_affine *point) {
  const uint8_t *data;
  size_t size;
  if (!get_bytes(env, value, G2_AFFINE, &data, &size, "expected a G2 point of this backend")) return false;
  memcpy(point, data, G2_AFFINE);
  return true;
}

static bool scalar_arg(napi_env env, napi_value value, blst_scalar *scalar) {
  const uint8_t *data;
  size_t size;
  if (!get_bytes(env, value, SCALAR, &data, &size, "expected a 32-octet big-endian scalar")) return false;
  blst_scalar_from_bendian(scalar, data);
  return true;
}

static bool flag_arg(napi_env env, napi_value value, bool *flag) {
  if (napi_get_value_bool(env, value, flag) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected a boolean");
    return false;
  }
  return true;
}

static napi_value g1_out(napi_env env, const blst_p1 *point) {
  blst_p1_affine affine;
  blst_p1_to_affine(&affine, point);
  return copy_out(env, &affine, G1_AFFINE);
}

static napi_value g2_out(napi_env env, const blst_p2 *point) {
  blst_p2_affine affine;
  blst_p2_to_affine(&affine, point);
  return copy_out(env, &affine, G2_AFFINE);
}

/*
 * g1Uncompress(octets, checkSubgroup): the affine point, or null for octets that are not the
 * compressed encoding of a point on the curve, for the identity, and (when checkSubgroup) for a
 * point outside the prime-order subgroup.
 */
static napi_value g1_uncompress(napi_env env, napi_callback_info info) {
  napi_value args[2];
  const uint8_t *data;
  size_t size;
  bool check;
  blst_p1_affine point;
  if (!get_args(env, info, 2, args)) return NULL;
  if (!get_bytes(env, args[0], 0, &data, &size, "expected a Uint8Array")) return NULL;
  if (!flag_arg(env, args[1], &check)) return NULL;
  if (size != G1_COMPRESSED || blst_p1_uncompress(&point, data) != BLST_SUCCESS ||
      blst_p1_affine_is_inf(&point) || (check && !blst_p1_affine_in_g1(&point)))
    return get_null(env);
  return copy_out(env, &point, G1_AFFINE);
}

static napi_value g2_uncompress(napi_env env, napi_callback_info info) {
  napi_value args[2];
  const uint8_t *data;
  size_t size;
  bool check;
  blst_p2_affine point;
  if (!get_args(env, info, 2, args)) return NULL;
  if (!get_bytes(env, args[0], 0, &data, &size, "expected a Uint8Array")) return NULL;
  if (!flag_arg(env, args[1], &check)) return NULL;
  if (size != G2_COMPRESSED || blst_p2_uncompress(&point, data) != BLST_SUCCESS ||
      blst_p2_affine_is_inf(&point) || (check && !blst_p2_affine_in_g2(&point)))
    return get_null(env);
  return copy_out(env, &point, G2_AFFINE);
}

static napi_value g1_compress(napi_env env, napi_callback_info info) {
  napi_value args[1];
  blst_p1_affine point;
  uint8_t out[G1_COMPRESSED];
  if (!get_args(env, info, 1, args) || !g1_arg(env, args[0], &point)) return NULL;
  blst_p1_affine_compress(out, &point);
  return copy_out(env, out, sizeof(out));
}

static napi_value g2_compress(napi_env env, napi_callback_info info) {
  napi_value args[1];
  blst_p2_affine point;
  uint8_t out[G2_COMPRESSED];
  if (!get_args(env, info, 1, args) || !g2_arg(env, args[0], &point)) return NULL;
  blst_p2_affine_compress(out, &point);
  return copy_out(env, out, sizeof(out));
}

static napi_value g1_is_identity(napi_env env, napi_callback_info info) {
  napi_value args[1];
  blst_p1_affine point;
  if (!get_args(env, info, 1, args) || !g1_arg(env, args[0], &point)) return NULL;
  return get_boolean(env, blst_p1_affine_is_inf(&point));
}

static napi_value g1_negate(napi_env env, napi_callback_info info) {
  napi_value args[1];
  blst_p1_affine point;
  if (!get_args(env, info, 1, args) || !g1_arg(env, args[0], &point)) return NULL;
  /* -(x, y) = (x, -y); the identity (0, 0) stays itself. */
  blst_fp_cneg(&point.y, &point.y, !blst_p1_affine_is_inf(&point));
  return copy_out(env, &point, G1_AFFINE);
}

/* g1Mul(point, scalar): point * scalar. */
static napi_value g1_mul(napi_env env, napi_callback_info info) {
  napi_value args[2];
  blst_p1_affine affine;
  blst_scalar scalar;
  blst_p1 point;
  if (!get_args(env, info, 2, args) || !g1_arg(env, args[0], &affine) ||
      !scalar_arg(env, args[1], &scalar))
    return NULL;
  blst_p1_from_affine(&point, &affine);
  blst_p1_mult(&point, &point, scalar.b, SCALAR_BITS);
  return g1_out(env, &point);
}

/* g2Mul(point, scalar): point * scalar. */
static napi_value g2_mul(napi_env env, napi_callback_info info) {
  napi_value args[2];
  blst_p2_affine affine;
  blst_scalar scalar;
  blst_p2 point;
  if (!get_args(env, info, 2, args) || !g2_arg(env, args[0], &affine) ||
      !scalar_arg(env, args[1], &scalar))
    return NULL;
  blst_p2_from_affine(&point, &affine);
  blst_p2_mult(&point, &point, scalar.b, SCALAR_BITS);
  return g2_out(env, &point);
}

/*
 * g1MultiScalarMul(points, scalars): sum(points[i] * scalars[i]) for n points laid end to end
 * (n * 96 octets) and n scalars laid end to end (n * 32 octets, big-endian), in one blst
 * multi-scalar multiplication.
 */
static napi_value g1_msm(napi_env env, napi_callback_info info) {
  napi_value args[2];
  const uint8_t *point_data, *scalar_data;
  size_t point_size, scalar_size;
  if (!get_args(env, info, 2, args)) return NULL;
  if (!get_bytes(env, args[0], 0, &point_data, &point_size, "expected G1 points laid end to end") ||
      !get_bytes(env, args[1], 0, &scalar_data, &scalar_size, "expected scalars laid end to end"))
    return NULL;
  size_t count = point_size / G1_AFFINE;
  if (point_size % G1_AFFINE != 0 || scalar_size != count * SCALAR)
    return type_error(env, "expected as many 32-octet scalars as 96-octet points");

  blst_p1 sum;
  if (count == 0) {
    memset(&sum, 0, sizeof(sum));
    return g1_out(env, &sum);
  }
  blst_p1_affine *points = malloc(count * G1_AFFINE);
  blst_scalar *scalars = malloc(count * sizeof(blst_scalar));
  size_t scratch_size = blst_p1s_mult_pippenger_scratch_sizeof(count);
  limb_t *scratch = malloc(scratch_size);
  if (points == NULL || scalars == NULL || scratch == NULL) {
    free(points);
    free(scalars);
    free(scratch);
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  /*
   * The identity adds nothing, and is left out: blst converts its table of multiples to affine
   * with one shared inversion, which a point at infinity among others turns into a wrong sum.
   */
  size_t kept = 0;
  for (size_t i = 0; i < count; i++) {
    memcpy(&points[kept], point_data + i * G1_AFFINE, G1_AFFINE);
    if (blst_p1_affine_is_inf(&points[kept])) continue;
    blst_scalar_from_bendian(&scalars[kept], scalar_data + i * SCALAR);
    kept++;
  }
  if (kept == 0) {
    free(points);
    free(scalars);
    free(scratch);
    memset(&sum, 0, sizeof(sum));
    return g1_out(env, &sum);
  }
  count = kept;
  /* A second pointer of NULL tells blst the first points at a flat array. */
  const blst_p1_affine *point_list[2] = {points, NULL};
  const byte *scalar_list[2] = {scalars[0].b, NULL};
  blst_p1s_mult_pippenger(&sum, point_list, count, scalar_list, SCALAR_BITS, scratch);
  free(points);
  free(scalars);
  free(scratch);
  return g1_out(env, &sum);
}

/*
 * g1Rows(points): the precomputation rows (ROW_SIZE octets each, laid end to end) of n points
 * laid end to end (n * 96 octets), for g1MultiScalarMulRows. Points only: no secret goes in.
 */
static napi_value g1_rows(napi_env env, napi_callback_info info) {
  napi_value args[1];
  const uint8_t *point_data;
  size_t point_size;
  if (!get_args(env, info, 1, args)) return NULL;
  if (!get_bytes(env, args[0], 0, &point_data, &point_size, "expected G1 points laid end to end")) return NULL;
  size_t count = point_size / G1_AFFINE;
  if (point_size % G1_AFFINE != 0 || count == 0) return type_error(env, "expected one or more 96-octet points");
  blst_p1_affine *points = malloc(point_size);
  uint8_t *rows = NULL;
  napi_value result = new_bytes(env, count * ROW_SIZE, &rows);
  if (points == NULL || result == NULL) {
    free(points);
    if (result != NULL) napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  /*
   * The identity's row is all zeros (the identity again, in blst's affine form), and it is kept
   * out of the precomputation: one point at infinity spoils the shared inversion for all.
   */
  size_t kept = 0;
  memset(rows, 0, count * ROW_SIZE);
  for (size_t i = 0; i < count; i++) {
    memcpy(&points[kept], point_data + i * G1_AFFINE, G1_AFFINE);
    if (!blst_p1_affine_is_inf(&points[kept])) kept++;
  }
  if (kept > 0) {
    blst_p1_affine *table = malloc(kept * ROW_SIZE);
    if (table == NULL) {
      free(points);
      napi_throw_error(env, NULL, "out of memory");
      return NULL;
    }
    const blst_p1_affine *point_list[2] = {points, NULL};
    blst_p1s_mult_wbits_precompute(table, ROW_WBITS, point_list, kept);
    for (size_t i = 0, next = 0; i < count; i++) {
      blst_p1_affine point;
      memcpy(&point, point_data + i * G1_AFFINE, G1_AFFINE);
      if (!blst_p1_affine_is_inf(&point)) memcpy(rows + i * ROW_SIZE, (uint8_t *)table + next++ * ROW_SIZE, ROW_SIZE);
    }
    free(table);
  }
  free(points);
  return result;
}

/*
 * g1MultiScalarMulRows(rows, scalars): sum(P_i * scalars[i]), P_i given by its g1Rows row (n rows
 * laid end to end), n scalars laid end to end (32 octets each, big-endian). The same point as
 * g1MultiScalarMul over the points: only the work differs.
 */
static napi_value g1_msm_rows(napi_env env, napi_callback_info info) {
  napi_value args[2];
  const uint8_t *row_data, *scalar_data;
  size_t row_size, scalar_size;
  if (!get_args(env, info, 2, args)) return NULL;
  if (!get_bytes(env, args[0], 0, &row_data, &row_size, "expected rows laid end to end") ||
      !get_bytes(env, args[1], 0, &scalar_data, &scalar_size, "expected scalars laid end to end"))
    return NULL;
  size_t count = row_size / ROW_SIZE;
  if (row_size % ROW_SIZE != 0 || count == 0 || scalar_size != count * SCALAR)
    return type_error(env, "expected as many 32-octet scalars as rows, at least one");
  blst_p1_affine *table = malloc(row_size);
  blst_scalar *scalars = malloc(count * sizeof(blst_scalar));
  limb_t *scratch = malloc(blst_p1s_mult_wbits_scratch_sizeof(count));
  if (table == NULL || scalars == NULL || scratch == NULL) {
    free(table);
    free(scalars);
    free(scratch);
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  memcpy(table, row_data, row_size);
  for (size_t i = 0; i < count; i++) blst_scalar_from_bendian(&scalars[i], scalar_data + i * SCALAR);
  const byte *scalar_list[2] = {scalars[0].b, NULL};
  blst_p1 sum;
  blst_p1s_mult_wbits(&sum, table, ROW_WBITS, count, scalar_list, SCALAR_BITS, scratch);
  free(table);
  free(scalars);
  free(scratch);
  return g1_out(env, &sum);
}

/* hashToG1(message, dst): hash_to_curve of RFC 9380, suite BLS12381G1_XMD:SHA-256_SSWU_RO_. */
static napi_value hash_to_g1(napi_env env, napi_callback_info info) {
  napi_value args[2];
  const uint8_t *message, *dst;
  size_t message_size, dst_size;
  blst_p1 point;
  if (!get_args(env, info, 2, args)) return NULL;
  if (!get_bytes(env, args[0], 0, &message, &message_size, "expected the message as a Uint8Array") ||
      !get_bytes(env, args[1], 0, &dst, &dst_size, "expected the DST as a Uint8Array"))
    return NULL;
  if (dst_size == 0 || dst_size > 255) return type_error(env, "the DST must be 1 to 255 octets");
  blst_hash_to_g1(&point, message, message_size, dst, dst_size, NULL, 0);
  return g1_out(env, &point);
}

/* g2Lines(point): the Miller-loop lines of a G2 point, for the pairings it takes part in. */
static napi_value g2_lines(napi_env env, napi_callback_info info) {
  napi_value args[1];
  blst_p2_affine point;
  if (!get_args(env, info, 1, args) || !g2_arg(env, args[0], &point)) return NULL;
  blst_fp6 *lines = malloc(LINES_SIZE);
  if (lines == NULL) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  blst_precompute_lines(lines, &point);
  napi_value result = copy_out(env, lines, LINES_SIZE);
  free(lines);
  return result;
}

/*
 * pairingProductIsOne(g1Points, g2Lines): whether prod e(g1Points[i], Q_i) is the identity of
 * GT, Q_i given by its lines (g2Lines): one Miller loop each, one final exponentiation. A G1
 * identity contributes e(O, Q) = 1 and is skipped (blst's loop is not defined for it).
 */
static napi_value pairing_product_is_one(napi_env env, napi_callback_info info) {
  napi_value args[2];
  bool is_array;
  uint32_t count, lines_count;
  if (!get_args(env, info, 2, args)) return NULL;
  if (napi_is_array(env, args[0], &is_array) != napi_ok || !is_array ||
      napi_get_array_length(env, args[0], &count) != napi_ok ||
      napi_is_array(env, args[1], &is_array) != napi_ok || !is_array ||
      napi_get_array_length(env, args[1], &lines_count) != napi_ok || count != lines_count)
    return type_error(env, "expected two arrays of the same length");

  blst_fp6 *lines = malloc(LINES_SIZE);
  if (lines == NULL) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  blst_fp12 product, term;
  bool any = false;
  for (uint32_t i = 0; i < count; i++) {
    napi_value point_value, lines_value;
    blst_p1_affine point;
    const uint8_t *lines_data;
    size_t lines_size;
    if (napi_get_element(env, args[0], i, &point_value) != napi_ok ||
        napi_get_element(env, args[1], i, &lines_value) != napi_ok) {
      free(lines);
      throw_last_error(env);
      return NULL;
    }
    if (!g1_arg(env, point_value, &point) ||
        !get_bytes(env, lines_value, LINES_SIZE, &lines_data, &lines_size,
                   "expected the lines of a G2 point of this backend")) {
      free(lines);
      return NULL;
    }
    if (blst_p1_affine_is_inf(&point)) continue;
    memcpy(lines, lines_data, LINES_SIZE);
    blst_miller_loop_lines(any ? &term : &product, lines, &point);
    if (any) blst_fp12_mul(&product, &product, &term);
    any = true;
  }
  free(lines);
  if (!any) return get_boolean(env, true);
  blst_final_exp(&product, &product);
  return get_boolean(env, blst_fp12_is_one(&product));
}

static napi_status export_function(napi_env env, napi_value exports, const char *name,
                                   napi_callback callback) {
  napi_value function;
  napi_status status = napi_create_function(env, name, NAPI_AUTO_LENGTH, callback, NULL, &function);
  if (status != napi_ok) return status;
  return napi_set_named_property(env, exports, name, function);
}

static napi_status export_number(napi_env env, napi_value exports, const char *name, uint32_t value) {
  napi_value number;
  napi_status status = napi_create_uint32(env, value, &number);
  if (status != napi_ok) return status;
  return napi_set_named_property(env, exports, name, number);
}

NAPI_MODULE_INIT() {
  static const struct {
    const char *name;
    napi_callback callback;
  } functions[] = {
      {"g1Uncompress", g1_uncompress},
      {"g2Uncompress", g2_uncompress},
      {"g1Compress", g1_compress},
      {"g2Compress", g2_compress},
      {"g1IsIdentity", g1_is_identity},
      {"g1Negate", g1_negate},
      {"g1Mul", g1_mul},
      {"g2Mul", g2_mul},
      {"g1MultiScalarMul", g1_msm},
      {"g1Rows", g1_rows},
      {"g1MultiScalarMulRows", g1_msm_rows},
      {"hashToG1", hash_to_g1},
      {"g2Lines", g2_lines},
      {"pairingProductIsOne", pairing_product_is_one},
  };
  for (size_t i = 0; i < sizeof(functions) / sizeof(functions[0]); i++) {
    if (export_function(env, exports, functions[i].name, functions[i].callback) != napi_ok) {
      throw_last_error(env);
      return NULL;
    }
  }
  if (export_number(env, exports, "interface", ADDON_INTERFACE) != napi_ok ||
      export_number(env, exports, "g1Size", (uint32_t)G1_AFFINE) != napi_ok ||
      export_number(env, exports, "g2Size", (uint32_t)G2_AFFINE) != napi_ok ||
      export_number(env, exports, "linesSize", (uint32_t)LINES_SIZE) != napi_ok ||
      export_number(env, exports, "rowSize", (uint32_t)ROW_SIZE) != napi_ok) {
    throw_last_error(env);
    return NULL;
  }
  return exports;
}
