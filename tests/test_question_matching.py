"""How a question's everyday words name columns and values by general rules (issue 14): yes/no columns
named as questions, other spellings, abbreviations inside names, joined words, a distinctive first
word, everyday words for common concepts; and the near misses that must not match."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from app.analyst.plan import plan_analysis
from app.understanding.roles import column_mentions, match_kinds
from app.understanding.spelling import text_variants, word_variants
from app.understanding.words import SYNONYMS
from tests.test_builtin_question_reading import seen, step


def named(question: str, *names: str) -> dict[str, str]:
    """Column → how the question named it, for columns of the given names."""
    columns = [{"name": n, "type": "number"} for n in names]
    return match_kinds(column_mentions(question, columns, SYNONYMS))


def saved(tmp_path: Path, frame: pd.DataFrame, name: str = "data.csv") -> dict:
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return seen(path)


# --- yes/no columns named as questions ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "column"),
    [
        ("用了优惠券的订单金额更高吗？", "是否使用优惠券"),
        ("使用优惠券的订单多吗", "是否使用优惠券"),
        ("各地区的退款率一样吗？", "是否退款"),
        ("会员的消费更多吗？", "是否会员"),
        ("Do orders with a coupon spend more?", "Used Coupon"),
        ("What is the refund rate by region?", "refunded (Y/N)"),
        ("Do members spend more?", "Is Member"),
        ("Which region has the highest refund rate?", "Has_Refund"),
    ],
)
def test_a_yes_no_column_is_named_by_the_core_of_its_question_shaped_name(question, column):
    assert named(question, column, "Amount", "订单金额").get(column) == "yes-no"


def test_a_name_not_shaped_like_a_question_has_no_yes_no_core():
    from app.understanding.column_forms import yes_no_core

    assert yes_no_core("是否使用优惠券") == ["使用优惠券", "优惠券"]
    assert yes_no_core("Used Coupon") == ["coupon"] and yes_no_core("refunded (Y/N)") == ["refunded"]
    assert yes_no_core("优惠券金额") == [] and yes_no_core("Coupon Value") == [] and yes_no_core("Usage") == []


def test_a_refund_rate_on_a_chinese_yes_no_column_is_its_rate_per_group(tmp_path):
    frame = pd.DataFrame(
        {
            "地区": ["华东", "华北", "华南", "西南"] * 10,
            "是否退款": ["是", "否", "否", "否", "是"] * 8,
            "订单金额": range(40),
        }
    )
    plan = plan_analysis("各地区的退款率有差别吗？", saved(tmp_path, frame), zh=True)
    assert step(plan, "proportion_test").arguments["value_column"] == "是否退款"
    assert step(plan, "proportion_test").arguments["group_column"] == "地区"


def test_orders_with_a_coupon_are_compared_by_the_yes_no_column(tmp_path):
    frame = pd.DataFrame(
        {
            "Used Coupon": ["Yes", "No"] * 20,
            "Order Amount": [float(i) for i in range(40)],
            "Region": ["East", "West", "North", "South"] * 10,
        }
    )
    plan = plan_analysis("Do orders with a coupon have a higher order amount?", saved(tmp_path, frame), zh=False)
    assert step(plan, "compare_two_groups").arguments == {"value_column": "Order Amount", "group_column": "Used Coupon"}


# --- other spellings ----------------------------------------------------------------------------------
def test_british_and_american_spellings_name_the_same_column():
    assert word_variants("colour") == {"color"} and word_variants("color") == {"colour"}
    assert word_variants("organisation") == {"organization"} and word_variants("analyzed") == {"analysed"}
    assert word_variants("centre") == {"center"} and word_variants("catalogue") == {"catalog"}
    assert word_variants("four") == set() and word_variants("size") == set() and word_variants("hour") == set()
    assert text_variants("Favourite Colour") == {"favorite color"}
    assert named("Which colour sells best?", "Color", "Sales") == {"Color": "spelling", "Sales": "synonym"}
    assert named("Which center is busiest?", "Centre", "Visitors")["Centre"] == "spelling"


def test_a_name_of_two_words_written_as_one_names_it():
    assert named("Is attrition higher for those who work overtime?", "Over Time", "Attrition") == {
        "Over Time": "spelling",
        "Attrition": "name",
    }
    assert named("Is it over?", "Over Time") == {}


# --- partial names --------------------------------------------------------------------------------------
def test_words_whose_initials_are_an_abbreviation_in_the_name_name_it():
    assert named("Is blood pressure higher in smokers?", "Systolic BP", "Smoker") == {
        "Systolic BP": "partial",
        "Smoker": "name",
    }
    # two columns hold BP: the words do not say which one
    assert "Systolic BP" not in named("Is blood pressure higher in smokers?", "Systolic BP", "Diastolic BP")
    # initials of filler words are not an abbreviation
    assert named("Is it about the same?", "Systolic BP", "Age") == {}


def test_hyphenated_words_name_a_column_joined_from_them():
    assert named("Are blue-collar workers in a union more often?", "bluecol", "union")["bluecol"] == "partial"
    assert "bluecol" not in named("Is the blue team better?", "bluecol", "union")


def test_a_distinctive_first_word_with_a_plain_measure_word_names_the_column():
    assert (
        named("Does the overall score differ by team?", "Overall Satisfaction", "Team")["Overall Satisfaction"]
        == "partial"
    )
    # another column holds the word: which one is not said
    assert "Overall Satisfaction" not in named(
        "Does the overall score differ?", "Overall Satisfaction", "Overall Value"
    )
    # "Customer Type" is a kind of customer, not a customer rating
    assert named("Top 5 customers by revenue", "Customer Type", "Revenue") == {"Revenue": "name"}


def test_the_head_word_of_an_english_name_names_it_when_no_other_column_has_it():
    assert named("Is satisfaction higher in each region?", "Customer Satisfaction", "Region") == {
        "Customer Satisfaction": "partial",
        "Region": "name",
    }
    # a plain measure word ("amount") or a word two columns end in does not say which column
    assert named("What is the amount per region?", "Order Amount", "Region") == {"Region": "name"}
    assert named("Is satisfaction higher?", "Staff Satisfaction", "Customer Satisfaction") == {}


@pytest.mark.parametrize(
    ("question", "names", "expected"),
    [
        ("满意度高的门店销售额也高吗？", ("客户满意度评分", "门店", "月销售额"), "客户满意度评分"),
        ("广告投入多的月份营业额高吗？", ("广告费用", "营业额"), "广告费用"),
    ],
)
def test_part_of_a_chinese_name_names_it_when_no_other_column_holds_it(question, names, expected):
    assert named(question, *names)[expected] == "partial"


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("哪个地区订单最多？", ("订单日期", "订单金额", "地区")),  # 订单 is in two names
        ("平均销量是多少？", ("平均温度", "销量")),  # 平均 is any average
        ("是否会影响销量？", ("是否会员", "销量")),  # a yes/no name by its core only
    ],
)
def test_a_shared_or_plain_piece_of_a_chinese_name_names_nothing(question, names):
    assert set(named(question, *names)) <= {"地区", "销量"}


def test_a_first_word_before_a_unit_and_an_adverb_head_name_their_columns():
    assert named("Does exercise lower BMI?", "Exercise Hours", "BMI")["Exercise Hours"] == "partial"
    assert named("Are remote workers happier?", "Works Remotely", "Dept") == {"Works Remotely": "partial"}
    # a time word before a unit is too plain to name a column
    assert named("How many years?", "Years at Company", "Age") == {}


def test_a_rating_named_beside_a_yes_no_group_is_compared_between_the_groups(tmp_path):
    """ "Is the overall score higher for remote workers": the 1-5 score compared between those who work
    remotely and those who do not, not the share working remotely at each score."""
    rng = __import__("numpy").random.default_rng(3)
    frame = pd.DataFrame(
        {
            "Dept": rng.choice(["Sales", "IT", "HR"], 60),
            "Works Remotely": rng.choice(["Yes", "No"], 60),
            "Overall Satisfaction": rng.integers(1, 6, 60),
            "Age": rng.integers(22, 60, 60),
        }
    )
    plan = plan_analysis("Is the overall score higher for remote workers?", saved(tmp_path, frame), zh=False)
    assert step(plan, "compare_two_groups").arguments == {
        "value_column": "Overall Satisfaction",
        "group_column": "Works Remotely",
    }


def test_a_partial_match_is_weaker_than_a_name():
    kinds = named("Is the overall score higher than the satisfaction?", "Overall Satisfaction", "Satisfaction")
    assert kinds["Satisfaction"] == "name"


# --- everyday words for common concepts ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "columns", "expected"),
    [
        ("Do older people earn more?", ("Age", "Monthly Income", "Team"), {"Age", "Monthly Income"}),
        ("Are heavier people taller?", ("Weight (kg)", "Height", "Sex"), {"Weight (kg)", "Height"}),
        ("年纪大的人工资更高吗？", ("年龄", "月薪", "部门"), {"年龄", "月薪"}),
        ("Which store is busier on weekends?", ("Store", "Visitors", "Sales"), {"Store", "Visitors"}),
        ("哪个门店客流最多？", ("门店", "客流量", "营业额"), {"门店", "客流量"}),
        ("Is it more expensive in the city?", ("Price", "City", "Rooms"), {"Price", "City"}),
        ("哪个城市更便宜？", ("城市", "价格", "面积"), {"城市", "价格"}),
        ("Do people who travel a lot leave more often?", ("Attrition", "Department"), {"Attrition"}),
        ("哪个部门离职的人多？", ("部门", "是否流失"), {"部门", "是否流失"}),
    ],
)
def test_an_everyday_word_names_a_common_concept(question, columns, expected):
    kinds = named(question, *columns)
    assert set(kinds) == expected and "synonym" in kinds.values()


def test_everyday_words_do_not_name_columns_they_only_look_like():
    # "older" names age, which is not inside "Holder"; "far" is distance, not a district; "cheaper"
    # is a price, not a feed (a three-letter piece "fee" would have taken it)
    assert named("Are older cards used more?", "Card Holder", "Usage") == {}
    assert named("How far is the store?", "District", "Distance") == {"Distance": "synonym"}
    assert named("Which one is cheaper?", "feed", "weight") == {}


def test_an_everyday_word_picks_the_column_a_question_is_about(tmp_path):
    frame = pd.DataFrame(
        {
            "Age": [20 + i for i in range(40)],
            "Monthly Income": [1000.0 + 37 * i % 500 for i in range(40)],
            "Team": ["A", "B"] * 20,
            "Tenure": [i % 7 for i in range(40)],
        }
    )
    plan = plan_analysis("Do older staff earn more?", saved(tmp_path, frame), zh=False)
    assert set(step(plan, "correlation_analysis").arguments["columns"][:2]) == {"Monthly Income", "Age"}


def test_the_dataset_fit_and_the_models_reading_say_which_columns_were_named_only_partly():
    from app.agent.context.question_reading import question_reading
    from app.understanding.dataset_choice import fit

    survey = {
        "name": "survey",
        "columns": [{"name": "Overall Satisfaction", "type": "number"}, {"name": "Team", "type": "category"}],
    }
    shop = {"name": "shop", "columns": [{"name": "Revenue", "type": "number"}]}
    found = fit("Does the overall score differ by team?", survey)
    assert found.kinds == {"Overall Satisfaction": "partial", "Team": "name"} and found.weak == ["Overall Satisfaction"]
    reading = question_reading("Does the overall score differ by team?", [survey, shop])
    assert "survey: Overall Satisfaction (partly), Team" in reading
    assert "shop" not in reading  # a dataset nothing matched is left out of the hint (issue 23)


# --- category values in everyday forms -------------------------------------------------------------------
def values_named(question: str, values: list[str]) -> list[str]:
    from app.understanding.roles import named_values

    column = {"name": "c", "type": "category", "levels": len(values), "values": values}
    return named_values(question, [column], [])[1]


@pytest.mark.parametrize(
    ("question", "values", "expected"),
    [
        ("男生和女生的成绩有差别吗？", ["男", "女"], ["男", "女"]),
        ("男同学的身高更高吗？", ["男", "女"], ["男"]),
        ("女性的工资更低吗？", ["男", "女"], ["女"]),
        ("男女工资有差别吗？", ["男", "女"], ["男", "女"]),
        ("是男的还是女的工资高？", ["男", "女"], ["男", "女"]),
        ("下雨天的销量更低吗？", ["晴", "雨", "阴"], ["雨"]),
        ("晴天卖得更多吗？", ["晴", "雨", "阴"], ["晴"]),
        ("Do women earn less than men?", ["Man", "Woman"], ["Woman", "Man"]),
        ("Do smokers weigh less?", ["Smoker", "Non-smoker"], ["Smoker"]),
        ("Is one a smoker more often?", ["Smokers", "Non-smokers"], ["Smokers"]),
        ("Is delivery slower on rainy days?", ["Rain", "Sun", "Snow"], ["Rain"]),
        ("Do we sell less in the rain?", ["Rainy", "Sunny"], ["Rainy"]),
        ("Which colour is most popular?", ["Color", "Shape"], ["Color"]),
    ],
)
def test_a_value_is_named_in_its_everyday_form(question, values, expected):
    assert values_named(question, values) == expected


@pytest.mark.parametrize(
    ("question", "values"),
    [
        ("这个问题很难回答吗？", ["男", "女"]),  # 难 is not 男
        ("雨量多的月份销量低吗？", ["晴", "雨", "阴"]),  # 雨量 is rainfall, a number, not the rainy days
        ("男装卖得好吗？", ["男", "女"]),  # not an everyday form of the person
        ("Are trains late more often?", ["Rain", "Sun", "Snow"]),
        ("Which grain is cheapest?", ["Rain", "Sun", "Snow"]),
        ("Are returned orders larger?", ["Returning", "New"]),  # both inflected: not the same word
        ("哪个是最好的？", ["是", "否"]),  # yes/no characters are everyday words
    ],
)
def test_a_near_miss_does_not_name_a_value(question, values):
    assert values_named(question, values) == []


CITIES_PINYIN = ["Hangzhou", "Shanghai", "Chongqing", "Xi'an", "Chengdu"]


@pytest.mark.parametrize(
    ("question", "values", "expected"),
    [
        ("只看杭州的受访者，满意度平均是多少？", CITIES_PINYIN, ["Hangzhou"]),
        ("重庆和西安的订单哪个多？", CITIES_PINYIN, ["Chongqing", "Xi'an"]),  # 重 read chong; 西安 xi+an
        ("Only the Hangzhou stores, please", ["杭州", "上海", "成都"], ["杭州"]),
        ("Compare Cheng Du with Shanghai", ["杭州", "上海", "成都"], ["成都", "上海"]),
    ],
)
def test_a_place_is_named_in_the_other_script(question, values, expected):
    """A city written in characters on one side and in pinyin on the other is one value (a new user's
    "只看杭州的受访者" over City = Hangzhou kept every row)."""
    assert values_named(question, values) == expected


@pytest.mark.parametrize(
    ("question", "values"),
    [
        ("我们的客户多吗？", ["Women", "Men"]),  # an English word is English: 我们 is wo+men, not Women
        ("Do women buy more?", ["我们", "他们"]),
        ("西部的销量高吗？", ["Xi'an", "Chengdu"]),  # 西 alone is xi, not Xi'an: two characters at least
        ("安全库存够吗？", ["China", "Anhui"]),  # 安全 is an+quan
        ("Is the chinese market bigger?", ["成都", "上海"]),
    ],
)
def test_pinyin_near_misses_name_no_value(question, values):
    assert values_named(question, values) == []


def test_a_word_whose_dictionary_sense_is_the_value_names_it():
    # 女性 (woman, female) is Women by meaning (bilingual.glossed_value_at), not by its sound
    assert values_named("我们的女性客户多吗？", ["Women", "Men"]) == ["Women"]


def test_a_one_character_value_is_read_only_in_a_column_with_few_levels():
    many = [chr(0x4E00 + i) for i in range(20)] + ["男"]
    assert values_named("男生多吗？", many) == []


def test_everyday_forms_of_values_pick_the_groups_compared(tmp_path):
    frame = pd.DataFrame(
        {"天气": ["晴", "雨", "阴", "晴"] * 10, "销量": [float(i % 9) for i in range(40)], "门店": ["A店", "B店"] * 20}
    )
    plan = plan_analysis("下雨天和晴天的销量有差别吗？", saved(tmp_path, frame), zh=True)
    assert step(plan, "compare_two_groups").arguments == {
        "value_column": "销量",
        "group_column": "天气",
        "groups": ["雨", "晴"],
    }
    # the class comes first: without the values read, it would be the grouping compared
    people = pd.DataFrame(
        {"班级": ["一班", "二班"] * 20, "性别": ["男", "女", "女", "男"] * 10, "成绩": [60.0 + i for i in range(40)]}
    )
    plan = plan_analysis("男生和女生的成绩一样吗？", saved(tmp_path, people, "people.csv"), zh=True)
    assert step(plan, "compare_two_groups").arguments == {"value_column": "成绩", "group_column": "性别"}


# --- words once listed for one dataset, now read by the general rules ---------------------------------------
@pytest.mark.parametrize(
    ("question", "column"),
    [
        ("How many cylinders?", "cyl"),
        ("Which supplement works?", "supp"),
        ("Is crime higher there?", "crim"),
        ("Does the magnitude vary?", "mag"),
        ("Is latitude related?", "lat"),
        ("By longitude?", "long"),
        ("Does perimeter matter?", "peri"),
        ("Permeability by rock?", "perm"),
        ("Population growth?", "pop"),
        ("Does exercise help?", "Exer"),
        ("How long is an eruption?", "eruptions"),
        ("How long is the wait?", "waiting"),
        ("Which feeds are best?", "feed"),
        ("Tooth length by dose?", "len"),
        ("Does displacement matter?", "displ"),
        ("Are older mothers' babies lighter?", "age"),
        ("Are taller people heavier?", "height"),
        ("Do hotter days have more ozone?", "Temp"),
        ("Are faster cars further?", "speed"),
        ("Which species has the widest petals?", "Petal.Width"),
        ("Do educated workers earn more?", "wage"),
    ],
)
def test_a_word_once_listed_for_one_dataset_is_read_by_a_general_rule(question, column):
    others = ("Ozone", "species", "dist", "weight", "Petal.Length", "educ")
    assert column in named(question, column, *[o for o in others if o.lower() != column.lower()])


def test_rainy_days_and_guests_name_the_weather_value_and_the_visitor_count(tmp_path):
    """ "下雨天客人少吗": 客人 is the visitor count (not the revenue beside it), 下雨天 the weather 雨."""
    rng = __import__("numpy").random.default_rng(5)
    frame = pd.DataFrame(
        {
            "天气": rng.choice(["晴", "雨", "多云"], 60),
            "营业额": rng.normal(8000, 900, 60).round(),
            "客流量": rng.integers(100, 400, 60),
        }
    )
    plan = plan_analysis("下雨天客人少吗？", saved(tmp_path, frame), zh=True)
    assert (plan.metric, plan.dimension, plan.values) == ("客流量", "天气", ["雨"])
    assert (
        plan_analysis(
            "Do we earn more when it is busier?",
            saved(tmp_path, frame.rename(columns={"营业额": "Revenue", "客流量": "Visitors"}), "en.csv"),
            zh=False,
        ).kind
        == "relationship"
    )


def test_what_a_customer_spends_is_the_shops_revenue():
    """ "spends" and "一共卖了" name the revenue column of a sales table (it asked which column they meant)."""
    from app.understanding.roles import column_mentions
    from app.understanding.words import SYNONYMS

    columns = [{"name": n, "type": "number"} for n in ("Units", "Unit Price", "Revenue", "Discount")]
    for question in ("Which customer type spends the most per order?", "每个渠道一共卖了多少钱？"):
        assert {m.name for m in column_mentions(question, columns, SYNONYMS)} == {"Revenue"}


def _named(question: str, *columns: tuple[str, str]) -> set[str]:
    from app.understanding.roles import column_mentions
    from app.understanding.words import SYNONYMS

    return {m.name for m in column_mentions(question, [{"name": n, "type": t} for n, t in columns], SYNONYMS)}


def test_an_id_columns_name_is_not_a_partial_name_of_the_rows():
    """ "男员工" speaks of the employees (the rows) and the value 男, not of 员工编号."""
    assert _named("男员工和女员工谁更满意？", ("员工编号", "identifier"), ("满意度", "number")) == {"满意度"}


def test_a_long_yes_no_name_said_in_other_words_order():
    named = _named("哪边更愿意把公司推荐给朋友？", ("是否愿意推荐公司给朋友", "boolean"), ("部门", "category"))
    assert named == {"是否愿意推荐公司给朋友"}
    assert _named("哪边的朋友更多？", ("是否愿意推荐公司给朋友", "boolean")) == set()


def test_a_noun_with_its_measure_word_after_it_is_counted_with_it_first():
    assert _named("哪三块地的产量最高？", ("地块", "category"), ("总产量 (kg)", "number")) == {"地块", "总产量 (kg)"}
    assert _named("几辆车坏了？", ("车辆", "category")) == {"车辆"}


def test_a_count_over_a_period_is_named_by_what_it_counts():
    assert _named(
        "Do Premium members come for more visits?", ("Visits Last Month", "integer"), ("Plan", "category")
    ) == {"Visits Last Month"}
    assert _named("How much money comes in from each plan?", ("Monthly Fee (£)", "number"), ("Plan", "category")) == {
        "Monthly Fee (£)",
        "Plan",
    }


def test_a_two_character_name_counted_by_its_last_character():
    assert _named("这四个月三家店一共卖了多少钱？每家店各占多少？", ("门店", "category"), ("销售额", "number")) == {
        "门店",
        "销售额",
    }
    assert _named("三个月的销售额", ("月份", "category"), ("销售额", "number")) == {"销售额"}  # time: not 月份


def test_a_doubled_consonant_before_ed_or_ing_is_the_same_word():
    from app.understanding.words import stem

    assert stem("cancelled") == stem("cancel") and stem("planned") == stem("plan") and stem("filled") == stem("fill")
    assert _named("Are members with a trainer less likely to cancel?", ("Cancelled", "boolean")) == {"Cancelled"}


def test_a_piece_of_a_named_value_is_that_value_not_another_column():
    """ "不施肥" is a value of 肥料; its "施肥" does not name 施肥量 (kg/亩)."""
    from app.understanding.roles import column_mentions
    from app.understanding.words import SYNONYMS

    columns = [
        {"name": "肥料", "type": "category", "levels": 3, "values": ["复合肥", "有机肥", "不施肥"]},
        {"name": "施肥量 (kg/亩)", "type": "number"},
        {"name": "产量 (kg)", "type": "number"},
    ]
    named = {m.name for m in column_mentions("施复合肥和不施肥，小麦产量差别大吗？", columns, SYNONYMS)}
    assert named == {"产量 (kg)"}
    assert {m.name for m in column_mentions("施肥越多产量越高吗？", columns, SYNONYMS)} == {
        "施肥量 (kg/亩)",
        "产量 (kg)",
    }
