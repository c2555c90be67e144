"""Spec 002's two vec_adds examples with their exact printed outputs, and the vec_adds
error cases of issue 2 (repeat_times 300, mask 129 on fp16, mask_h != 0 on fp32, a rep
stride of 256)."""
from __future__ import annotations

import numpy as np
import pytest

from fastisa import errors, shim
from fastisa import examples

ex = examples.load("tik_vec_adds")  # imports it with the vendor shim installed

# The "Output (dst_gm):" listings of spec 002, verbatim.
PRINTED_CONTIGUOUS = """
[[  2.   3.   4.   5.   6.   7.   8.   9.  10.  11.  12.  13.  14.  15.
16.  17.  18.  19.  20.  21.  22.  23.  24.  25.  26.  27.  28.  29.
30.  31.  32.  33.  34.  35.  36.  37.  38.  39.  40.  41.  42.  43.
44.  45.  46.  47.  48.  49.  50.  51.  52.  53.  54.  55.  56.  57.
58.  59.  60.  61.  62.  63.  64.  65.  66.  67.  68.  69.  70.  71.
72.  73.  74.  75.  76.  77.  78.  79.  80.  81.  82.  83.  84.  85.
86.  87.  88.  89.  90.  91.  92.  93.  94.  95.  96.  97.  98.  99.
100. 101. 102. 103. 104. 105. 106. 107. 108. 109. 110. 111. 112. 113.
114. 115. 116. 117. 118. 119. 120. 121. 122. 123. 124. 125. 126. 127.
128. 129. 130. 131. 132. 133. 134. 135. 136. 137. 138. 139. 140. 141.
142. 143. 144. 145. 146. 147. 148. 149. 150. 151. 152. 153. 154. 155.
156. 157. 158. 159. 160. 161. 162. 163. 164. 165. 166. 167. 168. 169.
170. 171. 172. 173. 174. 175. 176. 177. 178. 179. 180. 181. 182. 183.
184. 185. 186. 187. 188. 189. 190. 191. 192. 193. 194. 195. 196. 197.
198. 199. 200. 201. 202. 203. 204. 205. 206. 207. 208. 209. 210. 211.
212. 213. 214. 215. 216. 217. 218. 219. 220. 221. 222. 223. 224. 225.
226. 227. 228. 229. 230. 231. 232. 233. 234. 235. 236. 237. 238. 239.
240. 241. 242. 243. 244. 245. 246. 247. 248. 249. 250. 251. 252. 253.
254. 255. 256. 257.]
[258. 259. 260. 261. 262. 263. 264. 265. 266. 267. 268. 269. 270. 271.
272. 273. 274. 275. 276. 277. 278. 279. 280. 281. 282. 283. 284. 285.
286. 287. 288. 289. 290. 291. 292. 293. 294. 295. 296. 297. 298. 299.
300. 301. 302. 303. 304. 305. 306. 307. 308. 309. 310. 311. 312. 313.
314. 315. 316. 317. 318. 319. 320. 321. 322. 323. 324. 325. 326. 327.
328. 329. 330. 331. 332. 333. 334. 335. 336. 337. 338. 339. 340. 341.
342. 343. 344. 345. 346. 347. 348. 349. 350. 351. 352. 353. 354. 355.
356. 357. 358. 359. 360. 361. 362. 363. 364. 365. 366. 367. 368. 369.
370. 371. 372. 373. 374. 375. 376. 377. 378. 379. 380. 381. 382. 383.
384. 385. 386. 387. 388. 389. 390. 391. 392. 393. 394. 395. 396. 397.
398. 399. 400. 401. 402. 403. 404. 405. 406. 407. 408. 409. 410. 411.
412. 413. 414. 415. 416. 417. 418. 419. 420. 421. 422. 423. 424. 425.
426. 427. 428. 429. 430. 431. 432. 433. 434. 435. 436. 437. 438. 439.
440. 441. 442. 443. 444. 445. 446. 447. 448. 449. 450. 451. 452. 453.
454. 455. 456. 457. 458. 459. 460. 461. 462. 463. 464. 465. 466. 467.
468. 469. 470. 471. 472. 473. 474. 475. 476. 477. 478. 479. 480. 481.
482. 483. 484. 485. 486. 487. 488. 489. 490. 491. 492. 493. 494. 495.
496. 497. 498. 499. 500. 501. 502. 503. 504. 505. 506. 507. 508. 509.
510. 511. 512. 513.]]
"""

PRINTED_DISCONTIGUOUS = """
[[  2.   3.   4.   5.   6.   7.   8.   9.  10.  11.  12.  13.  14.  15.
16.  17.  18.  19.  20.  21.  22.  23.  24.  25.  26.  27.  28.  29.
30.  31.  32.  33.]
[  0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.
0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.
0.   0.   0.   0.]
[ 34.  35.  36.  37.  38.  39.  40.  41.  42.  43.  44.  45.  46.  47.
48.  49.  50.  51.  52.  53.  54.  55.  56.  57.  58.  59.  60.  61.
62.  63.  64.  65.]
[  0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.
0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.
0.   0.   0.   0.]
[ 66.  67.  68.  69.  70.  71.  72.  73.  74.  75.  76.  77.  78.  79.
80.  81.  82.  83.  84.  85.  86.  87.  88.  89.  90.  91.  92.  93.
94.  95.  96.  97.]
[  0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.
0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.
0.   0.   0.   0.]
[ 98.  99. 100. 101. 102. 103. 104. 105. 106. 107. 108. 109. 110. 111.
112. 113. 114. 115. 116. 117. 118. 119. 120. 121. 122. 123. 124. 125.
126. 127. 128. 129.]
[  0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.
0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.   0.
0.   0.   0.   0.]]
"""


def parse_printed(text, shape):
    """numpy's printed array -> float16 array of shape."""
    nums = text.replace("[", " ").replace("]", " ").split()
    return np.array([float(x) for x in nums], dtype=np.float16).reshape(shape)


def test_contiguous_example_exact_output():
    x = np.arange(512, dtype=np.float16).reshape(2, 256)
    (y,) = ex.build_contiguous().tikdb.start_debug({"src_gm": x}, interactive=False)
    want = parse_printed(PRINTED_CONTIGUOUS, (2, 256))
    assert y.dtype == np.float16 and y.shape == (2, 256)
    assert np.array_equal(y.view(np.uint16), want.view(np.uint16))


def test_discontiguous_example_exact_output_including_zero_rows():
    x = np.arange(128, dtype=np.float16).reshape(4, 32)
    (y,) = ex.build_discontiguous().tikdb.start_debug({"src_gm": x}, interactive=False)
    want = parse_printed(PRINTED_DISCONTIGUOUS, (8, 32))
    assert np.array_equal(y.view(np.uint16), want.view(np.uint16))
    assert not y[1::2].any()


def test_demo_report_matches_and_has_cycles():
    from fastisa import examples
    rep = examples.run("tik_vec_adds")
    assert rep.matches
    assert rep.cycles.get("Vector", 0) > 0 and rep.cycles.get("MTE2", 0) > 0
    assert "MATCH" in rep.format()


def test_examples_run_with_the_vendor_import():
    with shim.installed():
        from tbe import tik  # noqa: F401
        from te import tik as tik2
        assert tik2.Tik is tik.Tik


def _prog(dtype="float16"):
    from fastisa import tik
    tk = tik.Tik()
    a = tk.Tensor(dtype, (2, 256), name="a", scope=tik.scope_ubuf)
    b = tk.Tensor(dtype, (2, 256), name="b", scope=tik.scope_ubuf)
    return tk, a, b


def test_error_repeat_times_300():
    tk, a, b = _prog()
    with pytest.raises(errors.ConstraintError, match=r"vec_adds: repeat_times should be in "
                       r"the range of \[0, 255\], input repeat_times: 300"):
        tk.vec_adds(128, a, b, 2.0, 300, 8, 8)


def test_error_mask_129_on_fp16():
    tk, a, b = _prog()
    with pytest.raises(errors.ConstraintError, match=r"vec_adds: mask value should be in the "
                       r"range of \[1, 128\] for b16 tensor, input mask: 129"):
        tk.vec_adds(129, a, b, 2.0, 1, 8, 8)


def test_error_mask_h_nonzero_on_fp32():
    tk, a, b = _prog("float32")
    with pytest.raises(errors.ConstraintError, match=r"vec_adds: mask_h should be 0 for b32 "
                       r"tensor, input mask_h: 1"):
        tk.vec_adds([1, 2**64 - 1], a, b, 2.0, 1, 8, 8)


@pytest.mark.parametrize("which", ["dst_rep_stride", "src_rep_stride"])
def test_error_rep_stride_256(which):
    tk, a, b = _prog()
    d, s = (256, 8) if which == "dst_rep_stride" else (8, 256)
    with pytest.raises(errors.ConstraintError, match=rf"vec_adds: {which} should be in the "
                       rf"range of \[0, 255\], input {which}: 256"):
        tk.vec_adds(128, a, b, 2.0, 1, d, s)
