package org.yirage;

/**
 * Conversions between float and the 16-bit patterns of float16 (IEEE binary16) and bfloat16,
 * rounding to nearest even (Java 17 has no Float.floatToFloat16).
 */
public final class Float16Bits {
    private Float16Bits() {}

    /** The float value of a float16 bit pattern (exact). */
    public static float float16ToFloat(short bits) {
        int h = bits & 0xffff;
        int sign = (h & 0x8000) << 16;
        int exponent = (h >>> 10) & 0x1f;
        int mantissa = h & 0x3ff;
        if (exponent == 0x1f) { // inf or NaN
            return Float.intBitsToFloat(sign | 0x7f800000 | (mantissa << 13));
        }
        if (exponent == 0) { // zero or subnormal: mantissa · 2^-24
            float value = mantissa * 0x1p-24f;
            return sign != 0 ? -value : value;
        }
        return Float.intBitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
    }

    /** The float16 nearest to {@code value} (ties to even; overflow to infinity). */
    public static short floatToFloat16(float value) {
        int f = Float.floatToRawIntBits(value);
        int sign = (f >>> 16) & 0x8000;
        int magnitude = f & 0x7fffffff;
        if (magnitude >= 0x7f800000) { // inf or NaN (keeps NaN quiet and nonzero)
            return (short) (sign | 0x7c00 | (magnitude > 0x7f800000 ? 0x200 | ((magnitude >>> 13) & 0x3ff) : 0));
        }
        if (magnitude >= 0x477ff000) { // rounds to >= 65520: infinity
            return (short) (sign | 0x7c00);
        }
        if (magnitude < 0x38800000) { // below the smallest normal 2^-14: subnormal or zero
            float abs = Float.intBitsToFloat(magnitude);
            int units = Math.round(abs * 0x1p24f); // exact product; round half up, fix ties below
            float exact = abs * 0x1p24f;
            if (exact - (float) Math.floor(exact) == 0.5f && (units & 1) != 0) {
                units -= 1;
            }
            return (short) (sign | units);
        }
        int rounded = magnitude + 0xfff + ((magnitude >>> 13) & 1); // ties to even at bit 13
        return (short) (sign | ((rounded - 0x38000000) >>> 13));
    }

    /** The float value of a bfloat16 bit pattern (exact). */
    public static float bfloat16ToFloat(short bits) {
        return Float.intBitsToFloat((bits & 0xffff) << 16);
    }

    /** The bfloat16 nearest to {@code value} (ties to even). */
    public static short floatToBFloat16(float value) {
        int f = Float.floatToRawIntBits(value);
        if ((f & 0x7fffffff) > 0x7f800000) { // NaN stays NaN
            return (short) ((f >>> 16) | 0x40);
        }
        return (short) ((f + 0x7fff + ((f >>> 16) & 1)) >>> 16);
    }
}
