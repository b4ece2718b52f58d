package org.yirage;

/**
 * A graph the search compiled and measured on the device: kept (correct) or dropped, with its
 * relative error against the reference executor and why it was dropped ("" when kept).
 */
public record ProfileRecord(String description, double estimatedSeconds, double measuredSeconds,
                            double relativeError, boolean kept, String error) {}
