package org.yirage;

/**
 * A kernel checked against the reference executor and timed on its device: whether it was
 * correct, its worst relative error (-1 if not compared), median and minimum seconds (-1 when
 * not correct), and why it is not correct ("" when it is).
 */
public record Measurement(boolean correct, double relativeError, double medianSeconds,
                          double minSeconds, String error) {}
