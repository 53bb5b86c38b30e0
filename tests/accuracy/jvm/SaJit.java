// SPDX-License-Identifier: MIT
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Random;

/*
 * tests/accuracy/jvm-perfmap.sh's workload: sorts random arrays until the
 * main thread used ARGS[0] seconds of CPU, prints "done", then idles until
 * the file ARGS[1] exists (so a last `jcmd PID Compiler.perfmap` sees every
 * method that ran).
 */
public class SaJit {
	static long fill(int[] a, Random r) {
		for (int i = 0; i < a.length; i++)
			a[i] = r.nextInt();
		return a.length;
	}

	static long work(int[] a, Random r) {
		fill(a, r);
		Arrays.sort(a);
		return a[a.length / 2];
	}

	public static void main(String[] args) throws Exception {
		ThreadMXBean tb = ManagementFactory.getThreadMXBean();
		long end = tb.getCurrentThreadCpuTime() + (long)(Double.parseDouble(args[0]) * 1e9);
		int[] a = new int[20000];
		Random r = new Random(1);
		long s = 0;

		while (tb.getCurrentThreadCpuTime() < end)
			for (int i = 0; i < 16; i++)
				s += work(a, r);
		System.out.println("done " + s);
		while (!Files.exists(Paths.get(args[1])))
			Thread.sleep(20);
	}
}
